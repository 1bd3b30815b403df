"""The table expires conversations on its own: TTL on the attribute the adapter writes."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from bunko.deploy_schema import TTL_ATTRIBUTE
from infra.constructs.storage import Storage

pytestmark = pytest.mark.slow  # CDK synth


def test_the_table_deletes_items_after_their_ttl_attribute():
    stack = cdk.Stack(cdk.App())
    Storage(stack, "Storage", retain_data=False, deletion_protection=False)
    Template.from_stack(stack).has_resource_properties("AWS::DynamoDB::Table", {
        "TimeToLiveSpecification": {"AttributeName": TTL_ATTRIBUTE, "Enabled": True},
    })  # fmt: skip


def test_the_retention_reaches_the_functions_that_chat(tmp_path_factory, monkeypatch):
    from infra.app import build_app

    app = cdk.App(
        context={"aws:cdk:bundling-stacks": [], "bunko:conversationRetentionDays": "90"},
        outdir=str(tmp_path_factory.mktemp("cdk.retention")),
    )
    _, stack = build_app(app)
    services = {
        f["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]: f["Properties"]
        for f in Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
        if "POWERTOOLS_SERVICE_NAME" in f["Properties"].get("Environment", {}).get("Variables", {})
    }
    for name in ("bunko-api", "bunko-stream"):
        env = services[name]["Environment"]["Variables"]
        assert env["BUNKO_CONVERSATION_RETENTION_DAYS"] == "90"
    assert (
        "BUNKO_CONVERSATION_RETENTION_DAYS"
        not in services["bunko-ingest"]["Environment"]["Variables"]
    )
    # the functions read it under that name (a core setting, bunko.config.Settings)
    from bunko.config import Settings

    monkeypatch.setenv(
        "BUNKO_CONVERSATION_RETENTION_DAYS", env["BUNKO_CONVERSATION_RETENTION_DAYS"]
    )
    assert Settings(_env_file=None).conversation_retention_days == 90
