"""The AWS shape: DynamoDB, S3, OpenSearch Serverless, Bedrock, SQS, KMS, Secrets Manager.

Resource names come from AwsSettings, which the CDK stack sets on each function. Imports are
local so the embedded shape never imports boto3 or opensearch-py.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bunko.bootstrap.adapters import AccountAdapters, AccountStores, Adapters
from bunko.bootstrap.aws_secrets import DeploymentError, read_secret
from bunko.config import Settings

if TYPE_CHECKING:
    from bunko.services.accounts import AuthService

log = logging.getLogger(__name__)
__all__ = ["DeploymentError", "build_aws_adapters", "open_aws_auth"]


def build_aws_adapters(settings: Settings, *, sign_in: bool = True) -> Adapters:
    """`sign_in=False` for the ingest function: it never signs anyone in, so it neither
    needs nor may read the JWT secret (its role has no access); it reads model configs and
    decrypts their API keys, to embed with a workspace's own model."""
    from bunko.adapters.aws.clients import boto_client, opensearch_client
    from bunko.adapters.aws.dynamodb.conversations import DynamoDBConversationStore
    from bunko.adapters.aws.dynamodb.moves import DynamoDBMoveJobs
    from bunko.adapters.aws.dynamodb.research import DynamoDBResearchStore
    from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
    from bunko.adapters.aws.dynamodb.table import Table
    from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
    from bunko.adapters.aws.opensearch.ledger import IdLedger
    from bunko.adapters.aws.s3.archives import S3Archives
    from bunko.adapters.aws.s3.blobs import S3BlobStore
    from bunko.adapters.aws.s3.downloads import S3OriginalLinks
    from bunko.adapters.aws.s3.presign import S3UploadSigner
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.aws.sqs_queue import SqsIngestQueue, SqsMoveRunner
    from bunko.adapters.local.engine import Bm25PassageScorer
    from bunko.adapters.local.soffice import SofficeConverter
    from bunko.bootstrap.aws_embedder import build_aws_embedder
    from bunko.bootstrap.aws_generations import aws_generation_opener
    from bunko.ports.moves import MovePorts

    aws = AwsSettings()
    s3 = boto_client("s3", aws)
    blobs = S3BlobStore(s3, bucket=aws.bucket, prefix=aws.blob_prefix)
    embedder = build_aws_embedder(aws, settings)
    dynamodb = boto_client("dynamodb", aws)
    search = opensearch_client(aws)
    queue = (
        SqsIngestQueue(boto_client("sqs", aws), queue_url=aws.ingest_queue_url)
        if aws.ingest_queue_url
        else None
    )
    return Adapters(
        metadata=DynamoDBMetadataStore(dynamodb, table_name=aws.table_name, blobs=blobs),
        blobs=blobs,
        index=OpenSearchServerlessIndex(
            search,
            index=aws.opensearch_index,
            dimension=embedder.dimension if embedder else None,
            # Engine-picked document ids, so deletes do not wait for the refresh.
            ledger=IdLedger(Table(dynamodb, aws.table_name)),
        ),
        embedder=embedder,
        # Answers 503 where no LibreOffice is installed (the Lambda runtime has none).
        converter=SofficeConverter(sandbox=settings.libreoffice_sandbox == "on"),
        accounts=_aws_accounts(aws, settings, sign_in=sign_in),
        # A workspace's own embedding model: an index of its own in the same collection,
        # built in steps that the ingest queue carries (so only with the queue).
        generation_opener=(
            aws_generation_opener(
                settings, search, Table(dynamodb, aws.table_name), aws.opensearch_index
            )
            if queue
            else None
        ),
        send_build_step=queue.send_build_step if queue else None,
        queue=queue,
        research=DynamoDBResearchStore(Table(dynamodb, aws.table_name)),
        conversations=DynamoDBConversationStore(Table(dynamodb, aws.table_name)),
        # Pure Python BM25 over one corpus's passages: the same ranking as the embedded shape.
        passage_scorer=Bm25PassageScorer(),
        original_links=S3OriginalLinks(blobs),
        # a move's record in the table, its archive in the bucket, its work in the ingest
        # function (the API only queues it)
        moves=MovePorts(
            jobs=DynamoDBMoveJobs(Table(dynamodb, aws.table_name)),
            archives=S3Archives(s3, bucket=aws.bucket, scratch=settings.scratch),
            runner=SqsMoveRunner(boto_client("sqs", aws), queue_url=aws.ingest_queue_url)
            if aws.ingest_queue_url
            else None,
        ),
        upload_signer=S3UploadSigner(
            s3,
            bucket=aws.bucket,
            drop_prefix=aws.drop_prefix,
            expires_in=aws.presign_expires_seconds,
        ),
    )


def _aws_accounts(aws, settings: Settings, *, sign_in: bool) -> AccountAdapters | None:
    """Users, login attempts, model configs, settings and API keys in the same table; model
    API keys encrypted with KMS; the JWT key from Secrets Manager (`sign_in` only: else
    None). None (logged) when the deployment does not configure them."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.dynamodb.answers import DynamoDBAnswerStore
    from bunko.adapters.aws.dynamodb.audit import DynamoDBAuditStore
    from bunko.adapters.aws.dynamodb.identity_links import DynamoDBIdentityLinkStore
    from bunko.adapters.aws.dynamodb.libraries import DynamoDBLibraryStore
    from bunko.adapters.aws.dynamodb.model_configs import DynamoDBModelConfigStore
    from bunko.adapters.aws.dynamodb.settings import DynamoDBApiKeyStore, DynamoDBSettingsStore
    from bunko.adapters.aws.dynamodb.table import Table
    from bunko.adapters.aws.dynamodb.users import DynamoDBLoginAttemptStore, DynamoDBUserStore
    from bunko.adapters.aws.kms_cipher import KmsCipher

    if not sign_in:
        if not aws.model_keys_kms_key_id:
            log.warning("workspace embedding models are off: set BUNKO_MODEL_KEYS_KMS_KEY_ID")
            return None
    elif not aws.jwt_secret_arn or not aws.model_keys_kms_key_id:
        log.warning(
            "accounts and API keys are off: set BUNKO_JWT_SECRET_ARN and "
            "BUNKO_MODEL_KEYS_KMS_KEY_ID"
        )
        return None
    table = Table(boto_client("dynamodb", aws), aws.table_name)
    return AccountAdapters(
        stores=AccountStores(
            users=DynamoDBUserStore(table),
            login_attempts=DynamoDBLoginAttemptStore(table),
            model_configs=DynamoDBModelConfigStore(table),
            settings=DynamoDBSettingsStore(table),
            libraries=DynamoDBLibraryStore(table),
            links=DynamoDBIdentityLinkStore(table),
        ),
        api_keys=DynamoDBApiKeyStore(table),
        cipher=KmsCipher(boto_client("kms", aws), key_id=aws.model_keys_kms_key_id),
        jwt_secret=_jwt_secret(aws) if sign_in else None,
        oidc_client_secret=_oidc_client_secret(aws) if sign_in else None,
        audit=DynamoDBAuditStore(table, retention_days=settings.audit_retention_days),
        answers=DynamoDBAnswerStore(table),
    )


def _oidc_client_secret(aws) -> str | None:
    from bunko.adapters.aws.clients import boto_client

    if not aws.oidc_client_secret_arn:
        return None
    return read_secret(
        boto_client("secretsmanager", aws),
        aws.oidc_client_secret_arn,
        what="the identity provider's client secret",
        setting="BUNKO_OIDC_CLIENT_SECRET_ARN",
    )


def _jwt_secret(aws) -> str:
    from bunko.adapters.aws.clients import boto_client

    return read_secret(
        boto_client("secretsmanager", aws),
        aws.jwt_secret_arn,
        what="the JWT signing key",
        setting="BUNKO_JWT_SECRET_ARN",
    )


def open_aws_auth(settings: Settings) -> AuthService:
    """Just the auth service over the stack's table, for `bunko user create|list` run by an
    operator with the stack's outputs (BUNKO_BACKEND=aws, BUNKO_TABLE_NAME, BUNKO_BUCKET):
    the way to the first admin of a deployment. It signs nobody in, so it reads no JWT
    secret and needs no KMS key: only the table (and the bucket's name)."""
    import secrets

    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.dynamodb.audit import DynamoDBAuditStore
    from bunko.adapters.aws.dynamodb.identity_links import DynamoDBIdentityLinkStore
    from bunko.adapters.aws.dynamodb.libraries import DynamoDBLibraryStore
    from bunko.adapters.aws.dynamodb.model_configs import DynamoDBModelConfigStore
    from bunko.adapters.aws.dynamodb.settings import DynamoDBSettingsStore
    from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
    from bunko.adapters.aws.dynamodb.table import Table
    from bunko.adapters.aws.dynamodb.users import DynamoDBLoginAttemptStore, DynamoDBUserStore
    from bunko.adapters.aws.s3.blobs import S3BlobStore
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.bootstrap.accounts import build_auth
    from bunko.services.accounts import AuditTrail

    aws = AwsSettings()
    dynamodb = boto_client("dynamodb", aws)
    table = Table(dynamodb, aws.table_name)
    blobs = S3BlobStore(boto_client("s3", aws), bucket=aws.bucket, prefix=aws.blob_prefix)
    return build_auth(
        settings,
        stores=AccountStores(
            users=DynamoDBUserStore(table),
            login_attempts=DynamoDBLoginAttemptStore(table),
            model_configs=DynamoDBModelConfigStore(table),
            settings=DynamoDBSettingsStore(table),
            libraries=DynamoDBLibraryStore(table),
            links=DynamoDBIdentityLinkStore(table),
        ),
        metadata=DynamoDBMetadataStore(dynamodb, table_name=aws.table_name, blobs=blobs),
        jwt_secret=secrets.token_hex(32),  # never used: the CLI issues no token
        # the deployment's trail: what the operator changes here is recorded beside the rest
        audit=AuditTrail(DynamoDBAuditStore(table, retention_days=settings.audit_retention_days)),
    )
