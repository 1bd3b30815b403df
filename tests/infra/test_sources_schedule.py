"""The sources' scheduled sync in the synthesized stack (issue 48 point 4): an EventBridge
Scheduler schedule invokes the sync function with the input the handler reads, through a
role that may invoke that function and nothing else; the function's own role holds only
what a sync calls (the table, blobs but no drops, the ingest queue, the KMS key's Decrypt,
the index), no embedding model and no JWT secret; its timeout is under the schedule's rate."""

from __future__ import annotations

import json

import pytest

from infra.constructs.sources_sync import SCHEDULE_INPUT, SYNC_RATE_MINUTES
from tests.aws.handlers import load_event
from tests.infra.iam_grants import logical, role_statements
from tests.infra.template_queries import resources

pytestmark = pytest.mark.slow  # CDK synth


def _actions(statements: list[dict]) -> set[str]:
    out = set()
    for s in statements:
        out.update(s["actions"])
    return out


def test_a_schedule_invokes_the_sync_function_with_the_handlers_input(template):
    [(_, schedule)] = resources(template, "AWS::Scheduler::Schedule").items()
    props = schedule["Properties"]
    assert props["ScheduleExpression"] == f"rate({SYNC_RATE_MINUTES} minutes)"
    assert props["FlexibleTimeWindow"] == {"Mode": "OFF"}
    target = props["Target"]
    function = logical(template, "AWS::Lambda::Function", "FunctionsSources")
    assert target["Arn"] == {"Fn::GetAtt": [function, "Arn"]}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 0
    sent = json.loads(target["Input"])
    assert sent == SCHEDULE_INPUT
    # the sample event the handler tests use is this input as the Scheduler fills it in
    sample = load_event("sources_schedule.json")
    assert sample.keys() == sent.keys() and sample["action"] == sent["action"]
    props = resources(template, "AWS::Lambda::Function")[function]["Properties"]
    assert props["Timeout"] < SYNC_RATE_MINUTES * 60  # two runs never overlap
    env = props["Environment"]["Variables"]
    # it never embeds (the ingest function does): no model, no endpoint key to read
    assert env["BUNKO_EMBEDDING_PROVIDER"] == "none" and "BUNKO_EMBEDDING_MODEL_ID" not in env
    assert {"BUNKO_TABLE_NAME", "BUNKO_INGEST_QUEUE_URL", "BUNKO_MODEL_KEYS_KMS_KEY_ID"} <= set(env)
    assert "BUNKO_JWT_SECRET_ARN" not in env


def test_the_schedules_role_may_invoke_only_the_sync_function(template):
    role = logical(template, "AWS::IAM::Role", "SourcesSyncRole")
    assumed = resources(template, "AWS::IAM::Role")[role]["Properties"]["AssumeRolePolicyDocument"]
    principals = [s["Principal"]["Service"] for s in assumed["Statement"]]
    assert principals == ["scheduler.amazonaws.com"]
    statements = [
        s
        for p in resources(template, "AWS::IAM::Policy").values()
        if any(r.get("Ref") == role for r in p["Properties"]["Roles"])
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    function = logical(template, "AWS::Lambda::Function", "FunctionsSources")
    assert [(s["Action"], s["Resource"]) for s in statements] == [
        ("lambda:InvokeFunction", {"Fn::GetAtt": [function, "Arn"]})
    ]


def test_the_sync_functions_role_holds_only_what_a_sync_calls(template):
    statements = role_statements(template, "Sources")
    actions = _actions(statements)
    assert not any(
        a.startswith(("bedrock:", "secretsmanager:", "aws-marketplace:")) for a in actions
    )
    assert "kms:Encrypt" not in actions and "kms:Decrypt" in actions
    assert "sqs:SendMessage" in actions and "sqs:ReceiveMessage" not in actions
    s3 = [s for s in statements if any(a.startswith("s3:") for a in s["actions"])]
    rendered = json.dumps([r for s in s3 for r in s["resources"]])
    assert "blobs/" in rendered and "drop/" not in rendered
    assert "s3:GetObject" not in actions  # it writes and deletes originals; ingest reads them
    listing = [s for s in s3 if s["actions"] == ["s3:ListBucket"]]
    assert json.dumps(listing[0]["condition"]).count("drop/") == 0
    assert "dynamodb:GetItem" in actions and "aoss:APIAccessAll" in actions
