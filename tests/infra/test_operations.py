"""What an operator lives with (issue 30, security and cost/ops): who hears of a failed
file, what OpenSearch opens, a second stack in one account, and the adapter layer in every
partition. Read from the synthesized template."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from infra.app import build_app
from infra.constructs.functions import LWA_ACCOUNT, LWA_CHINA_ACCOUNTS
from infra.constructs.search import collection_name_for

pytestmark = pytest.mark.slow  # CDK synth


def synthesized(tmp_path_factory, **context) -> Template:
    app = cdk.App(
        context={"aws:cdk:bundling-stacks": [], **context},
        outdir=str(tmp_path_factory.mktemp("cdk.ops")),
    )
    _, stack = build_app(app)
    return Template.from_stack(stack)


@pytest.fixture(scope="module")
def staging(tmp_path_factory) -> Template:
    return synthesized(
        tmp_path_factory,
        **{"bunko:stackName": "BunkoStaging", "bunko:alarmEmail": "ops@example.com"},
    )


def names(template: Template, kind: str) -> set[str]:
    return {r["Properties"]["Name"] for r in template.find_resources(kind).values()}


def test_a_second_stack_in_the_account_gets_its_own_collection_and_policies(template, staging):
    assert names(template, "AWS::OpenSearchServerless::Collection") == {"bunko"}
    assert names(staging, "AWS::OpenSearchServerless::Collection") == {"bunkostaging"}
    for kind in (
        "AWS::OpenSearchServerless::SecurityPolicy",
        "AWS::OpenSearchServerless::AccessPolicy",
    ):
        assert not names(template, kind) & names(staging, kind)
    assert collection_name_for("Bunko") == "bunko"  # what earlier deployments were named
    assert collection_name_for("9-Team KB") == "b-9-team-kb"  # a letter first
    assert collection_name_for("X") == "x-kb"  # at least 3 characters
    assert len(collection_name_for("A" * 60)) == 28


def test_the_network_policy_opens_the_collections_api_and_not_its_dashboard(template):
    [network] = [
        json.loads(p["Properties"]["Policy"])
        for p in template.find_resources("AWS::OpenSearchServerless::SecurityPolicy").values()
        if p["Properties"]["Type"] == "network"
    ]
    kinds = {rule["ResourceType"] for policy in network for rule in policy["Rules"]}
    assert kinds == {"collection"}


def test_a_dead_lettered_file_notifies_the_alarm_topic(template, staging):
    alarms = template.find_resources("AWS::CloudWatch::Alarm")
    [topic] = template.find_resources("AWS::SNS::Topic")
    assert len(alarms) == 2  # while any waits, and each time one more arrives
    for alarm in alarms.values():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic}]
        assert "ApproximateNumberOfMessagesVisible" in json.dumps(alarm["Properties"])
        assert "NumberOfMessagesSent" not in json.dumps(alarm["Properties"])  # redrives: 0
    growth = [a for a in alarms.values() if "Metrics" in a["Properties"]]
    assert [m["Expression"] for a in growth for m in a["Properties"]["Metrics"]
            if "Expression" in m] == ["DIFF(waiting)"]  # fmt: skip
    template.has_output("AlarmTopicArn", {"Value": {"Ref": topic}})
    # Nobody subscribed unless an address is given; then that address (it confirms once).
    assert not template.find_resources("AWS::SNS::Subscription")
    staging.has_resource_properties(
        "AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": "ops@example.com"}
    )
    # Only over TLS (cdk-nag AwsSolutions-SNS3)
    [policy] = template.find_resources("AWS::SNS::TopicPolicy").values()
    assert "aws:SecureTransport" in json.dumps(policy)


def test_cloudwatch_may_publish_the_alarms_to_the_topic(template):
    """The TLS-only Deny replaces SNS's default policy, so CloudWatch needs its own Allow:
    for these alarms only (the confused deputy), in this account."""
    [topic] = template.find_resources("AWS::SNS::Topic")
    [policy] = template.find_resources("AWS::SNS::TopicPolicy").values()
    assert policy["Properties"]["Topics"] == [{"Ref": topic}]
    allows = [s for s in policy["Properties"]["PolicyDocument"]["Statement"]
              if s["Effect"] == "Allow"]  # fmt: skip
    assert allows == [{
        "Sid": "CloudWatchAlarmsPublish",
        "Effect": "Allow",
        "Principal": {"Service": "cloudwatch.amazonaws.com"},
        "Action": "sns:Publish",
        "Resource": {"Ref": topic},
        "Condition": {
            "ArnEquals": {"aws:SourceArn": [
                {"Fn::GetAtt": [alarm, "Arn"]}
                for alarm in template.find_resources("AWS::CloudWatch::Alarm")
            ]},
            "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
        },
    }]  # fmt: skip


def test_the_web_adapter_layer_resolves_in_each_partition(template):
    [stream] = [
        f["Properties"] for f in template.find_resources("AWS::Lambda::Function").values()
        if f["Properties"].get("Handler") == "run.sh"
    ]  # fmt: skip
    adapter = json.dumps([layer for layer in stream["Layers"] if "Adapter" in json.dumps(layer)])
    assert '"arn:", {"Ref": "AWS::Partition"}' in adapter  # not a fixed arn:aws
    assert ":layer:LambdaAdapterLayerX86:26" in adapter
    assert LWA_ACCOUNT in adapter
    conditions = template.to_json()["Conditions"]
    for region, account in LWA_CHINA_ACCOUNTS.items():
        assert account in adapter
        assert {"Fn::Equals": [{"Ref": "AWS::Region"}, region]} in conditions.values()


def test_committed_context_targets_the_partitions_the_layer_resolves_in():
    from tests.infra.template_queries import committed_context

    assert set(committed_context()["@aws-cdk/core:target-partitions"]) == {"aws", "aws-cn"}
