"""Fixtures for the AWS adapters: moto for S3/DynamoDB/SQS, osmem-server for OpenSearch.

osmem-server's pytest plugin provides `osmem_clone` (a fresh in-memory cluster per test).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import boto3
import pytest
from opensearchpy import OpenSearch

from bunko import lambda_entry
from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
from bunko.adapters.aws.dynamodb.table import Table
from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
from bunko.adapters.aws.opensearch.ledger import IdLedger
from bunko.adapters.aws.s3.blobs import S3BlobStore
from tests.aws.stand_ins import BUCKET, REGION, TABLE, MotoAws, moto_aws

INDEX = "bunko-test"


@pytest.fixture(autouse=True)
def layer_botocore(monkeypatch):
    """The botocore the functions run with: the layer keeps only BOTOCORE_SERVICES' models
    (infra/constructs/layer_bundling.py), so a client of any other service fails here as it
    would on Lambda (UnknownServiceError), for the code's clients and the tests' alike."""
    from botocore.exceptions import UnknownServiceError
    from botocore.session import Session

    from infra.constructs.layer_bundling import BOTOCORE_SERVICES

    create_client = Session.create_client

    def layer_client(self, service_name, *args, **kwargs):
        if service_name not in BOTOCORE_SERVICES:
            raise UnknownServiceError(
                service_name=service_name, known_service_names=", ".join(sorted(BOTOCORE_SERVICES))
            )
        return create_client(self, service_name, *args, **kwargs)

    monkeypatch.setattr(Session, "create_client", layer_client)


@pytest.fixture
def aws() -> Iterator[MotoAws]:
    with moto_aws() as stand_in:
        yield stand_in


@pytest.fixture
def opensearch(osmem_clone) -> OpenSearch:
    return OpenSearch(hosts=[osmem_clone.url])


@pytest.fixture
def search_index(opensearch: OpenSearch) -> OpenSearchServerlessIndex:
    index = OpenSearchServerlessIndex(opensearch, index=INDEX, dimension=4)
    index.ensure_index()
    return index


@pytest.fixture
def ledgered(aws, opensearch) -> OpenSearchServerlessIndex:
    """The search index with its id ledger in the table (the deployed shape)."""
    index = OpenSearchServerlessIndex(
        opensearch, index=INDEX, dimension=4, ledger=IdLedger(Table(aws.dynamodb, TABLE))
    )
    index.ensure_index()
    return index


@pytest.fixture
def store(aws) -> DynamoDBMetadataStore:
    """The DynamoDB metadata store, its large values in the bucket."""
    blobs = S3BlobStore(aws.s3, bucket=BUCKET, prefix="blobs/")
    return DynamoDBMetadataStore(aws.dynamodb, table_name=TABLE, blobs=blobs)


@dataclass
class FakeLambdaContext:
    """The attributes Powertools reads from a Lambda context."""

    function_name: str = "bunko-test"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:bunko-test"
    aws_request_id: str = "52fdfc07-2182-154f-163f-5f0f9a621d72"
    log_group_name: str = "/aws/lambda/bunko-test"
    log_stream_name: str = "2025/11/28/[$LATEST]abcdef"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


@pytest.fixture
def aws_env(aws, osmem_clone, opensearch, monkeypatch):
    """The environment the CDK stack gives the functions, pointing at the stand-ins."""
    for key, value in {
        "BUNKO_BACKEND": "aws", "BUNKO_TABLE_NAME": TABLE, "BUNKO_BUCKET": BUCKET,
        "BUNKO_OPENSEARCH_ENDPOINT": osmem_clone.url, "BUNKO_OPENSEARCH_SIGV4": "false",
        "BUNKO_OPENSEARCH_INDEX": INDEX, "BUNKO_EMBEDDING_PROVIDER": "none",
        "BUNKO_INGEST_QUEUE_URL": aws.queue_url, "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_METRICS_NAMESPACE": "BunkoTest", "POWERTOOLS_SERVICE_NAME": "bunko-test",
        "BUNKO_SIGNUP": "open",  # tests sign people up beside the admin
    }.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    OpenSearchServerlessIndex(opensearch, index=INDEX, dimension=None).ensure_index()
    for cached in (lambda_entry.api_app, lambda_entry.served_app, lambda_entry.ingest_handler,
                   lambda_entry.ingest_retries, lambda_entry.moves):  # fmt: skip
        cached.cache_clear()
    yield aws
    for cached in (lambda_entry.api_app, lambda_entry.served_app, lambda_entry.ingest_handler,
                   lambda_entry.ingest_retries, lambda_entry.moves):  # fmt: skip
        cached.cache_clear()


@pytest.fixture
def api(aws_env):
    """The API function, built as Lambda loads it, over the stand-ins."""
    from tests.aws.handlers import load_function

    return load_function("api")


@pytest.fixture
def ingest(aws_env):
    """The ingest function, built as Lambda loads it, over the stand-ins."""
    from tests.aws.handlers import load_function

    return load_function("ingest")


@pytest.fixture
def api_with_accounts(aws_env, monkeypatch):
    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="bunko-jwt", SecretString="s" * 48
    )
    key = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"]
    monkeypatch.setenv("BUNKO_JWT_SECRET_ARN", secret["ARN"])
    monkeypatch.setenv("BUNKO_MODEL_KEYS_KMS_KEY_ID", key)
    from tests.aws.handlers import load_function

    return load_function("api")


@pytest.fixture
def moto_deployment(osmem_clone, monkeypatch) -> Iterator[dict[str, str]]:
    """The environment an operator sets from the stack's outputs (tests/aws/deployment.py),
    with the ingest function indexing what the queue receives."""
    from tests.aws.deployment import moto_deployment_env

    with moto_deployment_env(osmem_clone.url, monkeypatch) as env:
        yield env


@pytest.fixture
def aws_shape(aws_env, monkeypatch):
    """The AWS shape's services as an operator's machine builds them (accounts on: the JWT
    secret and the KMS key exist), and the ingest function fed from the queue meanwhile."""
    import threading

    from botocore.client import BaseClient

    from bunko.bootstrap import build_services
    from bunko.config import Settings
    from tests.aws.handlers import QueuePump  # it imports this module: imported when used

    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="bunko-jwt", SecretString="s" * 48
    )
    key = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"]
    monkeypatch.setenv("BUNKO_JWT_SECRET_ARN", secret["ARN"])
    monkeypatch.setenv("BUNKO_MODEL_KEYS_KMS_KEY_ID", key)
    # moto answers one call at a time (its backends are not thread-safe); the import and the
    # ingest function below run at once, as on AWS, their calls taking turns.
    turns, call = threading.RLock(), BaseClient._make_api_call

    def one_at_a_time(self, operation, params):
        with turns:
            return call(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", one_at_a_time)
    services = build_services(Settings(password_hash_cost="light"))
    pump = QueuePump(aws_env.queue_url, aws_env.sqs)
    pump.start()
    try:
        yield services
    finally:
        pump.stop()
        services.close()
