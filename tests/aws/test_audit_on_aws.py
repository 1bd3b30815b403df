"""The audit trail on AWS (docs/audit.md): through Mangum, fed the API Gateway event shape,
the Lambda app (its paths under the stage, `/v1`) records sign-ins, writes and refusals in the table (moto), each with the
caller's address as API Gateway gives it and the TTL attribute that retention sets, and an
owner reads their library's trail with GET /audit; the operator's `bunko apikey` commands
land on the same trail."""

from __future__ import annotations

import json

import boto3
from typer.testing import CliRunner

from bunko.cli import app as cli
from bunko.deploy_schema import TTL_ATTRIBUTE
from tests.aws.handlers import call, get, sign_in
from tests.aws.stand_ins import REGION, TABLE


def test_the_lambda_app_records_and_reads_the_trail_in_the_table(api_with_accounts):
    api = api_with_accounts
    token = sign_in(api)
    status, _ = call(api, "POST", "/auth/login", {"username": "ada", "password": "wrong one!!"})
    assert status == 401
    status, _ = call(api, "DELETE", "/knowledge-bases/clear", token=token)
    assert status == 200
    status, _ = call(api, "DELETE", "/knowledge-bases/clear")
    assert status == 401

    status, trail = get(api, token, "/audit", {"limit": "10"})
    assert status == 200, trail
    # ada, the deployment's first account, is its admin: she reads every library's trail
    assert [(e["action"], e["outcome"], e["status"]) for e in trail] == [
        ("DELETE /knowledge-bases/clear", "refused", 401),
        ("DELETE /knowledge-bases/clear", "ok", 200),
        ("sign_in", "failed", 401), ("sign_in", "ok", 200), ("POST /auth/register", "ok", 201),
    ]  # fmt: skip
    assert {e["door"] for e in trail} == {"rest"}
    assert {e["client"] for e in trail} == {"203.0.113.10"}  # API Gateway's sourceIp

    items = boto3.client("dynamodb", region_name=REGION).scan(TableName=TABLE)["Items"]
    audit = [i for i in items if i["pk"]["S"].startswith("AUDIT#")]
    assert len(audit) == 5  # register, two sign-ins, the write, the refusal
    assert all(TTL_ATTRIBUTE in i for i in audit)  # retention: the table's TTL removes them
    assert "AUDIT#-" in {i["pk"]["S"] for i in audit}  # register and the tokenless refusal


def test_the_operators_key_commands_are_on_the_deployments_trail(api_with_accounts):
    """`bunko apikey create|revoke` run by the operator against the deployment (its table on
    moto) are events of the trail the API reads: user `operator`, door `cli`, the key's id
    and never its secret; a revoke of no key is refused."""
    api, runner = api_with_accounts, CliRunner()
    token = sign_in(api)  # ada, the deployment's first account and its admin
    made = runner.invoke(cli, ["apikey", "create", "--scopes", "kb:read", "--json"])
    assert made.exit_code == 0, made.output
    key = json.loads(made.stdout.strip().splitlines()[-1])
    assert runner.invoke(cli, ["apikey", "revoke", key["id"]]).exit_code == 0
    assert runner.invoke(cli, ["apikey", "revoke", "no-such-key"]).exit_code == 1

    status, trail = get(api, token, "/audit", {"limit": "10"})
    assert status == 200, trail
    cli_events = [e for e in trail if e["door"] == "cli"][::-1]  # oldest first
    assert [(e["action"], e["outcome"], e["status"], e["objectId"]) for e in cli_events] == [
        ("cli:apikey-create", "ok", 200, key["id"]),
        ("cli:apikey-revoke", "ok", 200, key["id"]),
        ("cli:apikey-revoke", "refused", 404, "no-such-key"),
    ]
    assert {e["userId"] for e in cli_events} == {"operator"}
    assert cli_events[0]["libraryId"] == cli_events[1]["libraryId"] == key["workspace_id"]
    assert key["key"] not in json.dumps(trail)
