"""AWS adapters: DynamoDB, S3, OpenSearch Serverless, Bedrock and SQS.

`build_aws_adapters(settings)` is what the composition root calls for BUNKO_BACKEND=aws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from bunko.config import Settings
    from bunko.ports import BlobStore, Embedder, IngestQueue, MetadataStore, SearchIndex
    from bunko.ports_accounts import SecretCipher
    from bunko.services.accounts import AccountStores
    from bunko.services.apikeys import ApiKeyStore

__all__ = ["AwsAccountParts", "AwsAdapters", "build_aws_account_parts", "build_aws_adapters"]


class AwsAdapters(NamedTuple):
    metadata: MetadataStore
    blobs: BlobStore
    index: SearchIndex
    embedder: Embedder | None
    queue: IngestQueue | None


def build_aws_adapters(settings: Settings) -> AwsAdapters:
    """Build every AWS adapter from the environment (see adapters/aws/settings.py).

    `settings` carries the core options (batch size); the AWS resource names come from
    AwsSettings, which the CDK stack sets on each function. Imports are local so the local
    shape never imports boto3 or opensearch-py.
    """
    from bunko.adapters.aws.bedrock_embedder import BedrockTitanEmbedder
    from bunko.adapters.aws.clients import boto_client, opensearch_client
    from bunko.adapters.aws.dynamodb_store import DynamoDBMetadataStore
    from bunko.adapters.aws.opensearch_index import OpenSearchServerlessIndex
    from bunko.adapters.aws.s3_blobs import S3BlobStore
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.adapters.aws.sqs_queue import SqsIngestQueue

    aws = AwsSettings()
    blobs = S3BlobStore(boto_client("s3", aws), bucket=aws.bucket, prefix=aws.blob_prefix)
    metadata = DynamoDBMetadataStore(
        boto_client("dynamodb", aws), table_name=aws.table_name, blobs=blobs
    )
    embedder = None
    if aws.embedding_provider == "bedrock":
        embedder = BedrockTitanEmbedder(
            boto_client("bedrock-runtime", aws),
            model_id=aws.embedding_model_id,
            dimension=aws.embedding_dimension,
            concurrency=aws.embed_concurrency,
        )
    index = OpenSearchServerlessIndex(
        opensearch_client(aws),
        index=aws.opensearch_index,
        dimension=embedder.dimension if embedder else None,
    )
    queue = (
        SqsIngestQueue(boto_client("sqs", aws), queue_url=aws.ingest_queue_url)
        if aws.ingest_queue_url
        else None
    )
    return AwsAdapters(metadata, blobs, index, embedder, queue)


class AwsAccountParts(NamedTuple):
    stores: AccountStores
    api_keys: ApiKeyStore
    cipher: SecretCipher
    jwt_secret: str


def build_aws_account_parts() -> AwsAccountParts:
    """The account side on AWS: users, login attempts, model configs, settings and API keys
    in the same table; model API keys encrypted with KMS; the JWT key from Secrets Manager."""
    from bunko.adapters.aws.clients import boto_client
    from bunko.adapters.aws.dynamodb_model_configs import DynamoDBModelConfigStore
    from bunko.adapters.aws.dynamodb_settings import DynamoDBApiKeyStore, DynamoDBSettingsStore
    from bunko.adapters.aws.dynamodb_table import Table
    from bunko.adapters.aws.dynamodb_users import DynamoDBLoginAttemptStore, DynamoDBUserStore
    from bunko.adapters.aws.kms_cipher import KmsCipher, load_secret
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.services.accounts import AccountStores

    aws = AwsSettings()
    if not aws.jwt_secret_arn or not aws.model_keys_kms_key_id:
        raise RuntimeError("set BUNKO_JWT_SECRET_ARN and BUNKO_MODEL_KEYS_KMS_KEY_ID")
    table = Table(boto_client("dynamodb", aws), aws.table_name)
    stores = AccountStores(
        users=DynamoDBUserStore(table),
        login_attempts=DynamoDBLoginAttemptStore(table),
        model_configs=DynamoDBModelConfigStore(table),
        settings=DynamoDBSettingsStore(table),
    )
    return AwsAccountParts(
        stores=stores,
        api_keys=DynamoDBApiKeyStore(table),
        cipher=KmsCipher(boto_client("kms", aws), key_id=aws.model_keys_kms_key_id),
        jwt_secret=load_secret(boto_client("secretsmanager", aws), aws.jwt_secret_arn),
    )
