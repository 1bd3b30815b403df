"""`bunko export` and `bunko import` run as the operator runs them against a deployment: real
processes with BUNKO_BACKEND=aws and the stack's settings, talking to moto's server (DynamoDB,
S3, SQS, Secrets Manager, KMS over HTTP) and osmem-server (OpenSearch), while the ingest
function, fed from the queue, indexes what the import queued. The round trip:

    data folder --export--> archive --import (process)--> AWS shape
                --export (process)--> archive --import--> new data folder

with the same documents, the same earlier revisions, the marked answers and the same top
hits after each move (keyword search on every side: the deployment has no model here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer
from opensearchpy import OpenSearch

from bunko import lambda_entry
from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
from bunko.bootstrap import build_services
from bunko.config import Settings
from bunko.deploy_schema import create_table_kwargs
from bunko.services.accounts.tokens import principal_for
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import load_event, load_function
from tests.conftest import make_services
from tests.e2e.library_move import LIBRARY, PASSWORD, documents, top_hits
from tests.e2e.test_library_move_contents import LEAVE, ask, history, with_history

pytestmark = pytest.mark.slow  # `bunko` processes against moto's and osmem's servers

BUNKO = [sys.executable, "-m", "bunko.cli"]
REGION, TABLE, BUCKET, INDEX = "us-east-1", "bunko-move-test", "bunko-move-test", "bunko-move"


@pytest.fixture
def moto_deployment(osmem_clone, monkeypatch) -> Iterator[dict[str, str]]:
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
        "BUNKO_BUCKET": BUCKET, "BUNKO_OPENSEARCH_ENDPOINT": osmem_clone.url,
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
        OpenSearch(hosts=[osmem_clone.url]), index=INDEX, dimension=None
    ).ensure_index()
    caches = (lambda_entry.ingest_handler, lambda_entry.ingest_retries)
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


class QueuePump(threading.Thread):
    """SQS → the ingest function, as Lambda's event source mapping runs it (in this
    process, through moto's server like the `bunko` processes)."""

    def __init__(self, queue_url: str) -> None:
        super().__init__(daemon=True)
        self.queue_url, self.sqs = queue_url, boto3.client("sqs")
        self.ingest = load_function("ingest")
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            batch = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
            ).get("Messages", [])
            for message in batch:
                event = load_event("sqs_ingest_job.json")
                event["Records"][0]["body"] = message["Body"]
                result = self.ingest.handler(event, FakeLambdaContext())
                if not result["batchItemFailures"]:
                    self.sqs.delete_message(
                        QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"]
                    )
            if not batch:
                self.halt.wait(0.1)

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=60)


def bunko(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """One `bunko` command in its own process, with only `env`'s BUNKO_ settings."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("BUNKO_", "AWS_"))}
    return subprocess.run(
        [*BUNKO, *args], env={**clean, **env, "BUNKO_NEW_USER_PASSWORD": PASSWORD},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def local(data: Path) -> dict[str, str]:
    return {"BUNKO_DATA_DIR": str(data), "BUNKO_EMBEDDER": "none", "BUNKO_BACKEND": "local"}


def test_bunko_export_and_import_processes_move_a_library_to_aws_and_back(
    moto_deployment, tmp_path: Path
):
    first, back = tmp_path / "first.zip", tmp_path / "back.zip"
    source = make_services(tmp_path / "source", embedder="none", backend="local")
    try:
        workspace = with_history(source)
        grace, kept = ask(source, workspace, "grace", "How long is parental leave?", found=True)
        source.answers.mark(grace, kept.id, mark="up", comment="clear")
        before, hits = documents(source, workspace), top_hits(source, workspace)
        chain = history(source, workspace, LEAVE)
    finally:
        source.close()
    assert all(hits.values())  # every question finds something to compare
    out = bunko(local(tmp_path / "source"), "export", LIBRARY, str(first), "--conversations")
    assert out.returncode == 0, out.stderr

    for user in (["ada", "--admin"], ["grace"]):
        made = bunko(moto_deployment, "user", "create", *user)
        assert made.returncode == 0, made.stderr
    imported = bunko(moto_deployment, "import", str(first), "--wait", "300")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert f"imported into library {LIBRARY!r} (made now): 7 added" in imported.stdout
    assert "7 indexed" in imported.stdout and "members added: ada, grace" in imported.stdout
    assert "earlier revisions written: 3; marked or missing answers added: 1" in imported.stdout
    assert "member 'lin' has no account here" in imported.stderr

    aws = build_services(Settings(password_hash_cost="light"))
    try:
        moved = aws.accounts.libraries.workspace_named(LIBRARY)
        assert documents(aws, moved) == before
        assert top_hits(aws, moved) == hits
        assert history(aws, moved, LEAVE) == chain
        ada = aws.accounts.auth.users.get_user_by_username("ada")
        marked, total = aws.answers.marked(replace(principal_for(ada), workspace_id=moved), limit=5)
        assert total == 1 and (marked[0].mark, marked[0].comment) == ("up", "clear")
    finally:
        aws.close()
    again = bunko(moto_deployment, "import", str(first), "--wait", "300")
    assert again.returncode == 0, again.stderr
    assert "0 added, 7 already here" in again.stdout

    exported = bunko(moto_deployment, "export", LIBRARY, str(back), "--conversations")
    assert exported.returncode == 0, exported.stderr
    assert "7 documents" in exported.stdout and "3 earlier revisions" in exported.stdout
    with zipfile.ZipFile(back) as zipped:
        manifest = json.loads(zipped.read("manifest.json"))
    assert (manifest["documents"], manifest["revisions"], manifest["answers"]) == (7, 3, 1)

    home = tmp_path / "home"
    target = make_services(home, embedder="none", backend="local")
    target.accounts.auth.create_user("grace", PASSWORD)
    target.close()
    landed_out = bunko(local(home), "import", str(back))
    assert landed_out.returncode == 0, landed_out.stdout + landed_out.stderr
    target = make_services(home, embedder="none", backend="local")
    try:
        landed = target.accounts.libraries.workspace_named(LIBRARY)
        assert documents(target, landed) == before
        assert top_hits(target, landed) == hits
        assert history(target, landed, LEAVE) == chain
    finally:
        target.close()
