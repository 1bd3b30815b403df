"""Names the CDK app and the AWS adapters share: the table's keys and indexes, and the
environment variables the stack sets on each function.

Dependency-free on purpose: `infra/` imports this and nothing else of the package, so
`cdk synth` never imports boto3.
"""

from __future__ import annotations

from typing import Any

ENV_PREFIX = "BUNKO_"

# DynamoDB single-table design (infra/TABLE_DESIGN.md).
PK, SK = "pk", "sk"
GSI1, GSI1_PK, GSI1_SK = "gsi1", "gsi1pk", "gsi1sk"
GSI2, GSI2_PK, GSI2_SK = "gsi2", "gsi2pk", "gsi2sk"

# (index name, partition key, sort key); all string keys, projection ALL.
GLOBAL_INDEXES: list[tuple[str, str, str]] = [(GSI1, GSI1_PK, GSI1_SK), (GSI2, GSI2_PK, GSI2_SK)]
# The table's TTL attribute (epoch seconds): DynamoDB deletes an item some time after it.
# Only conversations carry it (BUNKO_CONVERSATION_RETENTION_DAYS); reads hide expired items.
TTL_ATTRIBUTE = "expires"

# The object tag a presigned upload is signed with (x-amz-tagging), so the files bucket's
# lifecycle rule expires presigned drops that never ingest (and the drop copy of those that
# did: the original is kept under blobs/). An operator's drops carry no tag and stay.
PRESIGNED_TAG, PRESIGNED_TAG_VALUE = "bunko-presigned", "1"
# Libraries' archives (exports to download, imports' uploads: bunko/adapters/aws/s3/archives.py):
# only the functions reach them, and the bucket's lifecycle rule deletes them after a day.
MOVES_PREFIX, MOVES_DAYS = "moves/", 1
PRESIGNED_DROP_DAYS = 14  # the dead-letter queue's retention: a redriven message still finds it


def create_table_kwargs(table_name: str) -> dict[str, Any]:
    """CreateTable arguments (on-demand), for tests and for a hand-made table."""
    attributes = {PK, SK} | {name for _, pk, sk in GLOBAL_INDEXES for name in (pk, sk)}
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": a, "AttributeType": "S"} for a in sorted(attributes)
        ],
        "KeySchema": [
            {"AttributeName": PK, "KeyType": "HASH"},
            {"AttributeName": SK, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": name,
                "KeySchema": [
                    {"AttributeName": pk, "KeyType": "HASH"},
                    {"AttributeName": sk, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
            for name, pk, sk in GLOBAL_INDEXES
        ],
    }


# The AWS shape's settings (bunko.adapters.aws.settings.AwsSettings reads them; a test keeps
# the two lists equal).
AWS_SETTING_FIELDS = frozenset({
    "region", "table_name", "bucket", "blob_prefix", "drop_prefix", "opensearch_endpoint",
    "opensearch_index", "opensearch_sigv4", "opensearch_service", "ingest_queue_url",
    "ingest_retry_delays",
    "embedding_provider", "embedding_model_id", "embedding_dimension", "embed_concurrency",
    "jwt_secret_arn", "model_keys_kms_key_id", "bedrock_chat_model_ids",
    "presign_expires_seconds", "embed_max_seconds", "bedrock_read_timeout", "cors_origins",
    "openai_base_url", "openai_api_key_secret_arn", "openai_input_types",
    "openai_send_dimensions", "openai_allow_private_network", "oidc_client_secret_arn",
})  # fmt: skip


def env_name(field: str) -> str:
    """The environment variable that sets an AWS setting (for the CDK stack)."""
    if field not in AWS_SETTING_FIELDS:
        raise KeyError(field)
    return f"{ENV_PREFIX}{field.upper()}"
