"""Assertions on the synthesized template: streaming routes, ingest wiring, storage, search,
least-privilege policies, and a clean cdk-nag AwsSolutions report."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match

from infra.constructs.ingest import MAX_RECEIVES
from tests.infra.template_queries import logical_id, resources

pytestmark = pytest.mark.slow  # CDK synth


def test_cdk_nag_aws_solutions_is_clean(annotations):
    pattern = Match.string_like_regexp("AwsSolutions-.*")
    errors = annotations.find_error("*", pattern)
    warnings = annotations.find_warning("*", pattern)
    assert [(e.id, e.entry.data) for e in errors] == []
    assert [(w.id, w.entry.data) for w in warnings] == []


def test_streaming_paths_stream_from_the_stream_function(template):
    stream_fn = logical_id(template, "AWS::Lambda::Function", "FunctionsStream")
    api_fn = logical_id(template, "AWS::Lambda::Function", "FunctionsApi")
    methods = resources(template, "AWS::ApiGateway::Method")
    streaming = [
        m
        for m in methods.values()
        if m["Properties"]["Integration"].get("ResponseTransferMode") == "STREAM"
    ]
    # chat/stream, mcp and v1 (OpenAI-compatible chat), each with its own path and {proxy+}
    assert len(streaming) == 6
    for method in streaming:
        integration = method["Properties"]["Integration"]
        assert integration["TimeoutInMillis"] == 15 * 60 * 1000
        uri = json.dumps(integration["Uri"])
        assert "response-streaming-invocations" in uri
        assert stream_fn in uri
    buffered = [m for m in methods.values() if m not in streaming]
    assert len(buffered) == 2  # / and /{proxy+}
    for method in buffered:
        integration = method["Properties"]["Integration"]
        assert integration.get("ResponseTransferMode", "BUFFERED") == "BUFFERED"
        assert api_fn in json.dumps(integration["Uri"])


def _resource_path(template, resource_id: str) -> str:
    """/chat/stream for the API Gateway resource that serves it."""
    resources = template.find_resources("AWS::ApiGateway::Resource")
    parts = []
    while resource_id in resources:
        props = resources[resource_id]["Properties"]
        parts.append(props["PathPart"])
        parent = props["ParentId"]
        resource_id = parent.get("Ref", "") if isinstance(parent, dict) else ""
    return "/" + "/".join(reversed(parts))


def test_chat_routes_stream_from_the_stream_function(template):
    stream_fn = logical_id(template, "AWS::Lambda::Function", "FunctionsStream")
    methods = resources(template, "AWS::ApiGateway::Method")
    by_path = {
        _resource_path(template, m["Properties"]["ResourceId"]["Ref"]): m["Properties"]
        for m in methods.values()
        if isinstance(m["Properties"].get("ResourceId"), dict)
        and "Ref" in m["Properties"]["ResourceId"]
    }
    for path in ("/chat/stream", "/v1", "/v1/{proxy+}"):
        method = by_path[path]
        assert method["HttpMethod"] == "ANY"
        assert method["Integration"]["ResponseTransferMode"] == "STREAM", path
        assert stream_fn in json.dumps(method["Integration"]["Uri"]), path


def test_stream_function_web_adapter_streams_to_uvicorn(template):
    """The adapter streams (no buffering) to uvicorn on its port, once /health answers."""
    template.has_resource_properties("AWS::Lambda::Function", {
        "Handler": "run.sh",
        "Environment": {"Variables": Match.object_like({
            "AWS_LWA_INVOKE_MODE": "response_stream",
            "AWS_LWA_PORT": "8080",
            "AWS_LWA_READINESS_CHECK_PATH": "/health/live",
        })},
    })  # fmt: skip


def test_stream_function_runs_under_the_web_adapter(template):
    template.has_resource_properties("AWS::Lambda::Function", {
        "Handler": "run.sh",
        "Timeout": 900,
        "Environment": {"Variables": Match.object_like({
            "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
            "AWS_LWA_INVOKE_MODE": "response_stream",
            "BUNKO_BACKEND": "aws",
        })},
        "Layers": Match.array_with([Match.object_like({"Fn::Join": Match.array_with([
            Match.array_with([Match.string_like_regexp("layer:LambdaAdapterLayerX86:")]),
        ])})]),
    })  # fmt: skip


def test_ingest_queue_has_a_dead_letter_queue_and_a_long_enough_visibility(template):
    ingest = template.find_resources("AWS::Lambda::Function", {
        "Properties": {"Environment": {"Variables": {"POWERTOOLS_SERVICE_NAME": "bunko-ingest"}}}
    })  # fmt: skip
    [ingest_props] = [r["Properties"] for r in ingest.values()]
    queues = resources(template, "AWS::SQS::Queue")
    [main] = [q["Properties"] for q in queues.values() if "RedrivePolicy" in q["Properties"]]
    assert main["RedrivePolicy"]["maxReceiveCount"] == MAX_RECEIVES
    assert main["VisibilityTimeout"] >= ingest_props["Timeout"]
    assert main["SqsManagedSseEnabled"] is True
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "BatchSize": 1,
    })  # fmt: skip
    template.resource_count_is("AWS::CloudWatch::Alarm", 2)  # waiting, and one more arrived


def test_bucket_drops_notify_the_queue(template):
    [notifications] = resources(template, "Custom::S3BucketNotifications").values()
    configs = notifications["Properties"]["NotificationConfiguration"]["QueueConfigurations"]
    assert sorted(c["Events"][0] for c in configs) == ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]
    for config in configs:
        rules = config["Filter"]["Key"]["FilterRules"]
        assert rules == [{"Name": "prefix", "Value": "drop/"}]


def test_table_is_on_demand_with_point_in_time_recovery(template):
    template.has_resource_properties("AWS::DynamoDB::Table", {
        "BillingMode": "PAY_PER_REQUEST",
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": Match.array_with([
            Match.object_like({"IndexName": "gsi1"}), Match.object_like({"IndexName": "gsi2"}),
        ]),
    })  # fmt: skip
    template.has_resource("AWS::DynamoDB::Table", {"DeletionPolicy": "Retain"})


def test_vector_collection_with_its_three_policies(template):
    template.has_resource_properties(
        "AWS::OpenSearchServerless::Collection", {"Type": "VECTORSEARCH", "Name": "bunko"}
    )
    policies = {
        p["Properties"]["Type"]: p
        for p in resources(template, "AWS::OpenSearchServerless::SecurityPolicy").values()
    }
    assert set(policies) == {"encryption", "network"}
    [access] = resources(template, "AWS::OpenSearchServerless::AccessPolicy").values()
    policy = json.dumps(access["Properties"]["Policy"])
    for role in ("ApiRole", "StreamRole", "IngestRole", "IsCompleteRole"):
        assert logical_id(template, "AWS::IAM::Role", role) in policy
    assert "aoss:CreateIndex" in policy
    # once: on the model indexes (`<index>-m-*`) alone, never the deployment's
    # (test_permission_contract.py::test_only_model_indexes_are_deleted_at_run_time)
    assert policy.count("aoss:DeleteIndex") == 1


def test_index_is_created_by_a_polling_custom_resource(template):
    template.has_resource_properties("Custom::BunkoSearchIndex", {
        "IndexName": "chunks-amazon-titan-embed-text-v2-1024", "Dimension": "1024",
    })  # fmt: skip
    template.resource_count_is("AWS::StepFunctions::StateMachine", 1)  # the Provider's waiter


def statements(template) -> list[dict]:
    found = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        found += policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def test_no_wildcard_bedrock_or_dynamodb_permissions(template):
    relevant = [
        s
        for s in statements(template)
        if any(a.startswith(("bedrock:", "dynamodb:")) for a in as_list(s["Action"]))
    ]
    assert relevant
    for statement in relevant:
        for action in as_list(statement["Action"]):
            assert "*" not in action, statement
        for resource in as_list(statement["Resource"]):
            assert resource != "*", statement
            assert "*" not in json.dumps(resource), statement


def test_bedrock_is_limited_to_the_configured_models(template):
    bedrock = [
        s
        for s in statements(template)
        if any(a.startswith("bedrock:") for a in as_list(s["Action"]))
    ]
    assert len(bedrock) == 3  # one per function that embeds
    for statement in bedrock:
        assert as_list(statement["Action"]) == ["bedrock:InvokeModel"]
        assert "foundation-model/amazon.titan-embed-text-v2:0" in json.dumps(statement["Resource"])


def test_functions_use_their_own_roles_without_managed_policies(template):
    for name in ("ApiRole", "StreamRole", "IngestRole"):
        role = resources(template, "AWS::IAM::Role")[logical_id(template, "AWS::IAM::Role", name)]
        assert "ManagedPolicyArns" not in role["Properties"]


def test_secret_and_key_for_the_app(template):
    template.resource_count_is("AWS::SecretsManager::Secret", 1)
    template.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})
    secret_readers = [
        s for s in statements(template) if "secretsmanager:GetSecretValue" in as_list(s["Action"])
    ]
    assert len(secret_readers) == 2  # api and stream


def test_outputs_for_the_deploy_guide(template):
    outputs = template.find_outputs("*")
    for name in (
        "ApiUrl",
        "BucketName",
        "TableName",
        "CollectionEndpoint",
        "IngestQueueUrl",
        "DeadLetterQueueUrl",
        "SearchIndexName",
    ):
        assert name in outputs
