"""The web app as AWS serves it, for browser tests: the api function's app under uvicorn, with
the stack's environment, against moto's S3/DynamoDB/SQS/KMS/Secrets Manager as a real HTTP
server (a browser must reach S3 itself) and osmem-server for OpenSearch; config.json and the
page's CSP as CloudFront serves them; the files bucket's CORS rule as the CDK stack writes it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import requests
from starlette.responses import JSONResponse

from bunko import lambda_entry
from bunko.deploy_schema import create_table_kwargs
from tests.e2e.live_server import LiveServer

REGION = "us-east-1"
BUCKET = "bunko-files-test"
TABLE = "bunko-test"
INDEX = "bunko-test"
REPO = Path(__file__).resolve().parents[2]
_CACHED = (lambda_entry.api_app, lambda_entry.served_app, lambda_entry.ingest_handler,
           lambda_entry.ingest_retries)  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's server in its own process (tests/e2e/moto_cors_server.py); yields its URL.
    MOTO_DISABLE_GLOBAL_CORS is read when moto's settings are imported, and only without its
    blanket CORS does S3 answer by the bucket's rules."""
    port = free_port()
    env = {**os.environ, "MOTO_DISABLE_GLOBAL_CORS": "true"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.moto_cors_server", str(port)],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{url}/moto-api/", timeout=1)
                break
            except requests.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


def bucket_cors(*origins: str) -> dict:
    """The Files bucket's CORS rule exactly as infra's Storage construct synthesizes it, for
    `origins` (the web app's is a CloudFront token in the real stack), in S3's API shape."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from infra.constructs.storage import Storage

    stack = cdk.Stack(cdk.App(), "CorsOnly")
    storage = Storage(stack, "Storage", retain_data=False, deletion_protection=False)
    storage.allow_browser_uploads(list(origins))
    [bucket] = [
        b["Properties"] for key, b in Template.from_stack(stack).find_resources(
            "AWS::S3::Bucket").items() if key.startswith("StorageFiles")
    ]  # fmt: skip
    names = {"MaxAge": "MaxAgeSeconds", "ExposedHeaders": "ExposeHeaders", "Id": "ID"}
    rules = bucket["CorsConfiguration"]["CorsRules"]
    return {"CORSRules": [{names.get(k, k): v for k, v in rule.items()} for rule in rules]}


class AsDeployed:
    """What CloudFront puts in front of the app on AWS: config.json as the stack writes it
    (`bunko serve`'s names no presignUploadsAbove) and the page's CSP, whose connect-src names
    the API and the files bucket (infra/constructs/web.py)."""

    def __init__(self, app: Any, *, config: dict) -> None:
        self.app, self.config = app, config
        self.csp = b""  # once the server's origin is known

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["path"] == "/config.json":
            await JSONResponse(self.config)(scope, receive, send)
            return

        async def with_csp(message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() != b"content-security-policy"]  # fmt: skip
                message["headers"] = [*headers, (b"content-security-policy", self.csp)]
            await send(message)

        await self.app(scope, receive, with_csp)


@dataclass
class World:
    url: str  # the web app and its API
    moto_url: str
    s3: Any

    def allow_origins(self, *origins: str) -> None:
        self.s3.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=bucket_cors(*origins))

    def drops(self) -> dict[str, dict]:
        """Every object under the drop prefix, with its HEAD (length, type, metadata)."""
        listed = self.s3.list_objects_v2(Bucket=BUCKET, Prefix="drop/").get("Contents", [])
        return {o["Key"]: self.s3.head_object(Bucket=BUCKET, Key=o["Key"]) for o in listed}


@contextmanager
def serve_as_deployed(
    *, moto_url: str, opensearch_url: str, monkeypatch, presign_above: int
) -> Iterator[World]:
    """A fresh moto account with the stack's resources, the functions' environment (left to
    `monkeypatch` to undo) and the api function's app served over a socket."""
    from opensearchpy import OpenSearch

    from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
    from infra.constructs.web import content_security_policy

    requests.post(f"{moto_url}/moto-api/reset", timeout=10)
    env = {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION, "AWS_ENDPOINT_URL": moto_url,
        "BUNKO_BACKEND": "aws", "BUNKO_TABLE_NAME": TABLE, "BUNKO_BUCKET": BUCKET,
        "BUNKO_OPENSEARCH_ENDPOINT": opensearch_url, "BUNKO_OPENSEARCH_SIGV4": "false",
        "BUNKO_OPENSEARCH_INDEX": INDEX, "BUNKO_EMBEDDING_PROVIDER": "none",
        "POWERTOOLS_TRACE_DISABLED": "1", "POWERTOOLS_METRICS_NAMESPACE": "BunkoTest",
        "POWERTOOLS_SERVICE_NAME": "bunko-test",
    }  # fmt: skip
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=BUCKET)
    boto3.client("dynamodb", region_name=REGION).create_table(**create_table_kwargs(TABLE))
    queue = boto3.client("sqs", region_name=REGION).create_queue(QueueName="ingest")
    monkeypatch.setenv("BUNKO_INGEST_QUEUE_URL", queue["QueueUrl"])
    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="bunko-jwt", SecretString="s" * 48
    )
    monkeypatch.setenv("BUNKO_JWT_SECRET_ARN", secret["ARN"])
    key = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"]
    monkeypatch.setenv("BUNKO_MODEL_KEYS_KMS_KEY_ID", key)
    index = OpenSearchServerlessIndex(
        OpenSearch(hosts=[opensearch_url]), index=INDEX, dimension=None
    )
    index.ensure_index()
    for function in _CACHED:
        function.cache_clear()
    try:
        front = AsDeployed(
            lambda_entry.api_app(),
            config={"apiBaseUrl": "", "presignUploadsAbove": presign_above},
        )
        server = LiveServer(front)
        front.csp = content_security_policy(server.url, moto_url).encode()
        with server:
            yield World(url=server.url, moto_url=moto_url, s3=s3)
    finally:
        for function in _CACHED:
            function.cache_clear()
