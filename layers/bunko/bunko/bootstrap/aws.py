"""The AWS shape: DynamoDB, S3, OpenSearch Serverless, Bedrock, SQS, KMS, Secrets Manager.

Resource names come from AwsSettings, which the CDK stack sets on each function. Imports are
local so the embedded shape never imports boto3 or opensearch-py.
"""

from __future__ import annotations

import logging

from bunko.bootstrap.adapters import AccountAdapters, AccountStores, Adapters
from bunko.bootstrap.aws_secrets import DeploymentError, read_secret
from bunko.config import Settings

log = logging.getLogger(__name__)
__all__ = ["DeploymentError", "build_aws_adapters"]


def build_aws_adapters(settings: Settings, *, accounts: bool = True) -> Adapters:
    """`accounts=False` for the ingest function: it never signs anyone in, so it neither
    needs nor may read the JWT secret or the model-keys KMS key (its role has neither)."""
    from bunko.adapters.aws.clients import boto_client, opensearch_client
    from bunko.adapters.aws.dynamodb_research import DynamoDBResearchStore
    from bunko.adapters.aws.dynamodb_store import DynamoDBMetadataStore
    from bunko.adapters.aws.dynamodb_table import Table
    from bunko.adapters.aws.opensearch_index import OpenSearchServerlessIndex
    from bunko.adapters.aws.opensearch_ledger import IdLedger
    from bunko.adapters.aws.s3_blobs import S3BlobStore
    from bunko.adapters.aws.s3_presign import S3UploadSigner
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.aws.sqs_queue import SqsIngestQueue
    from bunko.adapters.local.passage_scorer import Bm25PassageScorer
    from bunko.adapters.local.soffice import SofficeConverter
    from bunko.bootstrap.aws_embedder import build_aws_embedder

    aws = AwsSettings()
    s3 = boto_client("s3", aws)
    blobs = S3BlobStore(s3, bucket=aws.bucket, prefix=aws.blob_prefix)
    embedder = build_aws_embedder(aws, settings)
    dynamodb = boto_client("dynamodb", aws)
    return Adapters(
        metadata=DynamoDBMetadataStore(dynamodb, table_name=aws.table_name, blobs=blobs),
        blobs=blobs,
        index=OpenSearchServerlessIndex(
            opensearch_client(aws),
            index=aws.opensearch_index,
            dimension=embedder.dimension if embedder else None,
            # Engine-picked document ids, so deletes do not wait for the refresh.
            ledger=IdLedger(Table(dynamodb, aws.table_name)),
        ),
        embedder=embedder,
        # Answers 503 where no LibreOffice is installed (the Lambda runtime has none).
        converter=SofficeConverter(sandbox=settings.libreoffice_sandbox == "on"),
        accounts=_aws_accounts(aws) if accounts else None,
        queue=(
            SqsIngestQueue(boto_client("sqs", aws), queue_url=aws.ingest_queue_url)
            if aws.ingest_queue_url
            else None
        ),
        research=DynamoDBResearchStore(Table(dynamodb, aws.table_name)),
        # Pure Python BM25 over one corpus's passages: the same ranking as the embedded shape.
        passage_scorer=Bm25PassageScorer(),
        upload_signer=S3UploadSigner(
            s3,
            bucket=aws.bucket,
            drop_prefix=aws.drop_prefix,
            expires_in=aws.presign_expires_seconds,
        ),
    )


def _aws_accounts(aws) -> AccountAdapters | None:
    """Users, login attempts, model configs, settings and API keys in the same table; model
    API keys encrypted with KMS; the JWT key from Secrets Manager. None (logged) when the
    deployment does not configure them."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.dynamodb_model_configs import DynamoDBModelConfigStore
    from bunko.adapters.aws.dynamodb_settings import DynamoDBApiKeyStore, DynamoDBSettingsStore
    from bunko.adapters.aws.dynamodb_table import Table
    from bunko.adapters.aws.dynamodb_users import DynamoDBLoginAttemptStore, DynamoDBUserStore
    from bunko.adapters.aws.kms_cipher import KmsCipher

    if not aws.jwt_secret_arn or not aws.model_keys_kms_key_id:
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
        ),
        api_keys=DynamoDBApiKeyStore(table),
        cipher=KmsCipher(boto_client("kms", aws), key_id=aws.model_keys_kms_key_id),
        jwt_secret=_jwt_secret(aws),
    )


def _jwt_secret(aws) -> str:
    from bunko.adapters.aws.clients import boto_client

    return read_secret(
        boto_client("secretsmanager", aws),
        aws.jwt_secret_arn,
        what="the JWT signing key",
        setting="BUNKO_JWT_SECRET_ARN",
    )
