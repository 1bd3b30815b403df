"""A deployment as its operator reaches it from a machine: moto's server (DynamoDB, S3, SQS,
Secrets Manager, KMS over HTTP) and osmem-server (OpenSearch) with the stack's settings in the
environment, the ingest function fed from the queue as Lambda's event source mapping feeds
it, and `bunko` commands run as their own processes against it."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from moto.server import ThreadedMotoServer
from opensearchpy import OpenSearch

from bunko import lambda_entry
from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
from bunko.deploy_schema import create_table_kwargs
from tests.aws.handlers import QueuePump
from tests.e2e.library_move import PASSWORD

BUNKO = [sys.executable, "-m", "bunko.cli"]
REGION, TABLE, BUCKET, INDEX = "us-east-1", "bunko-move-test", "bunko-move-test", "bunko-move"


@contextmanager
def moto_deployment_env(osmem_url: str, monkeypatch) -> Iterator[dict[str, str]]:
    """The environment an operator sets from the stack's outputs, pointing at moto's server
    and osmem's; the table, bucket, queues, JWT secret and KMS key made there."""
    # port 0: the system picks a free one as it binds (no window for another job to take it)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing", "BUNKO_BACKEND": "aws", "BUNKO_TABLE_NAME": TABLE,
        "BUNKO_BUCKET": BUCKET, "BUNKO_OPENSEARCH_ENDPOINT": osmem_url,
        "BUNKO_OPENSEARCH_SIGV4": "false", "BUNKO_OPENSEARCH_INDEX": INDEX,
        "BUNKO_EMBEDDING_PROVIDER": "none", "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_METRICS_NAMESPACE": "BunkoTest", "POWERTOOLS_SERVICE_NAME": "bunko-test",
    }  # fmt: skip
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    boto3.client("dynamodb").create_table(**create_table_kwargs(TABLE))
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    sqs = boto3.client("sqs")
    env["BUNKO_INGEST_QUEUE_URL"] = sqs.create_queue(QueueName="bunko-move-ingest")["QueueUrl"]
    secret = boto3.client("secretsmanager").create_secret(Name="jwt", SecretString="s" * 48)
    env["BUNKO_JWT_SECRET_ARN"] = secret["ARN"]
    env["BUNKO_MODEL_KEYS_KMS_KEY_ID"] = boto3.client("kms").create_key()["KeyMetadata"]["KeyId"]
    for key in ("BUNKO_INGEST_QUEUE_URL", "BUNKO_JWT_SECRET_ARN", "BUNKO_MODEL_KEYS_KMS_KEY_ID"):
        monkeypatch.setenv(key, env[key])
    OpenSearchServerlessIndex(
        OpenSearch(hosts=[osmem_url]), index=INDEX, dimension=None
    ).ensure_index()
    caches = (lambda_entry.ingest_handler, lambda_entry.ingest_retries, lambda_entry.moves)
    for cached in caches:
        cached.cache_clear()
    pump = QueuePump(env["BUNKO_INGEST_QUEUE_URL"])
    pump.start()
    try:
        yield env
    finally:
        pump.stop()
        for cached in caches:
            cached.cache_clear()
        # moto's state lives in this process, not in the server: the next test starts empty
        urllib.request.urlopen(
            urllib.request.Request(f"{env['AWS_ENDPOINT_URL']}/moto-api/reset", method="POST")
        )
        server.stop()


def bunko(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """One `bunko` command in its own process, with only `env`'s BUNKO_ settings."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("BUNKO_", "AWS_"))}
    return subprocess.run(
        [*BUNKO, *args], env={**clean, **env, "BUNKO_NEW_USER_PASSWORD": PASSWORD},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
