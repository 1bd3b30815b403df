"""The first admin of a deployment: `bunko user create NAME --admin` run by the operator
with BUNKO_BACKEND=aws and the stack's outputs, against moto's server (a real HTTP endpoint,
so the CLI runs as its own process), then signed in by the api's own auth service."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import boto3
import pytest
from moto.server import ThreadedMotoServer

from bunko.bootstrap.aws import open_aws_auth
from bunko.config import Settings
from bunko.deploy_schema import create_table_kwargs
from bunko.domain.audit import AuditQuery
from tests.waiting import free_port

pytestmark = pytest.mark.slow  # real `bunko` processes against a moto server

BUNKO = [sys.executable, "-m", "bunko.cli"]
REGION, TABLE, BUCKET = "us-east-1", "bunko-cli-test", "bunko-cli-test"
PASSWORD = "correct horse battery staple"


@pytest.fixture
def deployment(monkeypatch) -> Iterator[dict[str, str]]:
    """The environment an operator sets from the stack's outputs, pointing at moto."""
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "BUNKO_BACKEND": "aws", "BUNKO_TABLE_NAME": TABLE, "BUNKO_BUCKET": BUCKET,
    }  # fmt: skip
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    boto3.client("dynamodb", region_name=REGION).create_table(**create_table_kwargs(TABLE))
    boto3.client("s3", region_name=REGION).create_bucket(Bucket=BUCKET)
    try:
        yield env
    finally:
        # moto's state lives in this process, not in the server: start the next test empty
        urllib.request.urlopen(
            urllib.request.Request(f"{env['AWS_ENDPOINT_URL']}/moto-api/reset", method="POST")
        )
        server.stop()


def bunko(env: dict[str, str], *args: str, password: str = PASSWORD):
    # no data folder, no JWT secret, no KMS key: only the table and the bucket's name
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BUNKO_")}
    return subprocess.run(
        [*BUNKO, *args], env={**clean, **env, "BUNKO_NEW_USER_PASSWORD": password},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_operator_creates_the_first_admin_who_then_signs_in(deployment):
    created = bunko(deployment, "user", "create", "ada", "--admin")
    assert created.returncode == 0, created.stderr
    assert created.stdout.startswith("created admin ada (")
    listed = bunko(deployment, "user", "list")
    assert listed.returncode == 0 and "ada  (admin)" in listed.stdout
    # The functions' auth service (same table) signs the new admin in.
    token, user = open_aws_auth(Settings()).login("ada", PASSWORD)
    assert user.is_admin and token
    # a second account of the same name is refused, and nothing changes
    again = bunko(deployment, "user", "create", "ada")
    assert again.returncode == 1 and "error:" in again.stderr
    assert bunko(deployment, "user", "list").stdout.count("ada") == 1


def test_the_operator_promotes_demotes_and_resets_a_password(deployment):
    assert bunko(deployment, "user", "create", "ada").returncode == 0
    promoted = bunko(deployment, "user", "promote", "ada")
    assert promoted.returncode == 0 and "ada is an admin now" in promoted.stdout
    last = bunko(deployment, "user", "demote", "ada")
    assert last.returncode == 1 and "last admin" in last.stderr
    fresh = "ada's brand new password"
    reset = bunko(deployment, "user", "reset-password", "ada", password=fresh)
    assert reset.returncode == 0, reset.stderr
    auth = open_aws_auth(Settings())
    _, user = auth.login("ada", fresh)
    assert user.is_admin
    # each command is one event on the deployment's trail (in its table): the operator's,
    # door cli, the user's id; never a password
    events = auth.audit.store.events(AuditQuery(limit=100)).events[::-1]  # oldest first
    assert [(e.action, e.outcome, e.status, e.object_id, e.user_id, e.door) for e in events] == [
        ("cli:user-create", "ok", 200, user.id, "operator", "cli"),
        ("cli:user-promote", "ok", 200, user.id, "operator", "cli"),
        ("cli:user-demote", "failed", 409, user.id, "operator", "cli"),
        ("cli:user-reset-password", "ok", 200, user.id, "operator", "cli"),
        ("sign_in", "ok", 200, None, user.id, "rest"),  # the api's own sign-in, just above
    ]  # fmt: skip
    assert fresh not in repr(events) and PASSWORD not in repr(events)


def test_a_missing_table_says_which_setting_to_check(deployment):
    wrong = {**deployment, "BUNKO_TABLE_NAME": "no-such-table"}
    result = bunko(wrong, "user", "list")
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert "ResourceNotFoundException" in result.stderr
    assert "BUNKO_TABLE_NAME" in result.stderr and "TableName" in result.stderr
