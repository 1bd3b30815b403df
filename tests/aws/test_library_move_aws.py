"""A library moved from the embedded shape to a deployment and back: exported from a data
folder, imported into the AWS shape (DynamoDB and S3 on moto, OpenSearch on osmem-server)
by the same import code, its documents indexed by the ingest function from the SQS queue,
exported from there, and imported into a new data folder. After each move the library holds
the same documents and members and ranks the same top hits (keyword search on every side:
the deployment here has no embedding model)."""

from __future__ import annotations

import threading
from pathlib import Path

import boto3
import pytest
from botocore.client import BaseClient

from bunko.bootstrap import build_services
from bunko.bootstrap.moving import moving_parts
from bunko.config import Settings
from bunko.domain.audit import AuditQuery
from bunko.services.accounts import LOCAL_PRINCIPAL
from bunko.services.moving import export_library, import_library
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import load_event, load_function
from tests.aws.stand_ins import REGION
from tests.conftest import make_services
from tests.e2e.library_move import LIBRARY, PASSWORD, documents, make_library, top_hits


@pytest.fixture
def aws_shape(aws_env, monkeypatch):
    """The AWS shape's services as an operator's machine builds them (accounts on: the JWT
    secret and the KMS key exist), and the ingest function fed from the queue meanwhile."""
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
    pump = QueuePump(aws_env)
    pump.start()
    try:
        yield services
    finally:
        pump.stop()
        services.close()


class QueuePump(threading.Thread):
    """SQS → the ingest function, as Lambda's event source mapping runs it."""

    def __init__(self, aws_env) -> None:
        super().__init__(daemon=True)
        self.aws, self.ingest = aws_env, load_function("ingest")
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            batch = self.aws.sqs.receive_message(
                QueueUrl=self.aws.queue_url, MaxNumberOfMessages=10
            ).get("Messages", [])
            for message in batch:
                event = load_event("sqs_ingest_job.json")
                event["Records"][0]["body"] = message["Body"]
                result = self.ingest.handler(event, FakeLambdaContext())
                if not result["batchItemFailures"]:
                    self.aws.sqs.delete_message(
                        QueueUrl=self.aws.queue_url, ReceiptHandle=message["ReceiptHandle"]
                    )
            if not batch:
                self.halt.wait(0.05)

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=30)


def test_embedded_to_aws_and_back_keeps_the_library_and_its_top_hits(aws_shape, tmp_path: Path):
    first, back = tmp_path / "first.zip", tmp_path / "back.zip"
    source = make_services(tmp_path / "source", embedder="none", backend="local")
    try:
        workspace = make_library(source)
        before, hits = documents(source, workspace), top_hits(source, workspace)
        export_library(moving_parts(source), workspace, first)
    finally:
        source.close()
    assert all(hits[q] for q in hits)  # every question finds something to compare

    aws = aws_shape
    aws.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
    aws.accounts.auth.create_user("grace", PASSWORD)
    report = import_library(moving_parts(aws), first, wait_seconds=120)
    assert (report.added, report.indexed, report.pending) == (7, 7, [])
    assert report.members_missing == ["lin"] and report.members_added == ["ada", "grace"]
    moved = aws.accounts.libraries.workspace_named(LIBRARY)
    assert documents(aws, moved) == before
    assert top_hits(aws, moved) == hits
    again = import_library(moving_parts(aws), first, wait_seconds=120)
    assert (again.added, again.unchanged) == (0, 7)
    assert aws.library.count_documents(moved) == 7
    export_library(moving_parts(aws), moved, back)
    trail = aws.audit.read(LOCAL_PRINCIPAL, AuditQuery(user_id="operator")).events
    assert [(e.action, e.outcome) for e in trail] == [
        ("cli:export", "ok"), ("cli:import", "ok"), ("cli:import", "ok"),
    ]  # fmt: skip

    target = make_services(tmp_path / "target", embedder="none", backend="local")
    try:
        target.accounts.auth.create_user("grace", PASSWORD)
        home = import_library(moving_parts(target), back, wait_seconds=120)
        assert (home.members_missing, home.members_added) == (["ada"], ["grace"])
        landed = target.accounts.libraries.workspace_named(LIBRARY)
        assert documents(target, landed) == before
        assert top_hits(target, landed) == hits
    finally:
        target.close()
