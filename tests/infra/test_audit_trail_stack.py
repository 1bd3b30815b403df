"""The audit trail on AWS: its retention reaches the functions that record (bunko:
auditRetentionDays → BUNKO_AUDIT_RETENTION_DAYS), and no function's role may update or
delete an audit item (`AUDIT#…` keys), so the table's TTL is the only thing that removes one."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

pytestmark = pytest.mark.slow  # CDK synth


def test_retention_reaches_the_web_functions_and_no_role_rewrites_the_trail(
    tmp_path_factory, monkeypatch
):
    from infra.app import build_app

    app = cdk.App(
        context={"aws:cdk:bundling-stacks": [], "bunko:auditRetentionDays": "30"},
        outdir=str(tmp_path_factory.mktemp("cdk.audit")),
    )
    _, stack = build_app(app)
    template = Template.from_stack(stack)
    functions = {
        f["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]: f["Properties"]
        for f in template.find_resources("AWS::Lambda::Function").values()
        if "POWERTOOLS_SERVICE_NAME" in f["Properties"].get("Environment", {}).get("Variables", {})
    }
    for name in ("bunko-api", "bunko-stream"):
        assert functions[name]["Environment"]["Variables"]["BUNKO_AUDIT_RETENTION_DAYS"] == "30"
    from bunko.config import Settings

    monkeypatch.setenv("BUNKO_AUDIT_RETENTION_DAYS", "30")
    assert Settings(_env_file=None).audit_retention_days == 30

    denies = {}
    for policy_id, policy in template.find_resources("AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Effect"] == "Deny" and "dynamodb:LeadingKeys" in str(statement):
                denies[policy_id] = statement
    roles = {
        role["Ref"]
        for policy_id in denies
        for role in template.find_resources("AWS::IAM::Policy")[policy_id]["Properties"]["Roles"]
    }
    # every role granted the table (the index setup's is not): api, stream, ingest, sources
    assert {r.removeprefix("Functions").split("Role")[0] for r in roles} == {
        "Api", "Stream", "Ingest", "Sources"}  # fmt: skip
    for statement in denies.values():
        assert sorted(statement["Action"]) == [
            "dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:UpdateItem"]  # fmt: skip
        assert statement["Condition"] == {
            "ForAnyValue:StringLike": {"dynamodb:LeadingKeys": ["AUDIT#*"]}
        }
