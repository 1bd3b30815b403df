"""Template assertions for what a real account would hit and the emulators cannot see
(issue "AWS as a real account would run it"): each test names its point."""

from __future__ import annotations

import json
from http import HTTPStatus

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template

from infra.app import build_app
from infra.constructs.search import COLLECTION_NAME, SearchCollection, policy_name
from infra.stacks.bunko_stack import BunkoConfig

pytestmark = pytest.mark.slow  # CDK synth


def functions_by_service(template) -> dict[str, dict]:
    found = {}
    for resource in template.find_resources("AWS::Lambda::Function").values():
        env = resource["Properties"].get("Environment", {}).get("Variables", {})
        if "POWERTOOLS_SERVICE_NAME" in env:
            found[env["POWERTOOLS_SERVICE_NAME"]] = resource["Properties"]
    return found


@pytest.fixture(scope="module")
def prod(tmp_path_factory) -> Template:
    app = cdk.App(
        context={
            "aws:cdk:bundling-stacks": [],
            "bunko:profile": "prod",
            "bunko:corsOrigins": '["https://app.example.com"]',
        },
        outdir=str(tmp_path_factory.mktemp("cdk.prod")),
    )
    app, stack = build_app(app)
    return Template.from_stack(stack)


def kms_actions(template, function_service: str) -> set[str]:
    """The kms:* actions the function's role is granted."""
    [logical] = [
        key
        for key, resource in template.find_resources("AWS::Lambda::Function").items()
        if resource["Properties"].get("Environment", {}).get("Variables", {}).get(
            "POWERTOOLS_SERVICE_NAME") == function_service
    ]  # fmt: skip
    role = template.find_resources("AWS::Lambda::Function")[logical]["Properties"]["Role"]
    actions = set()
    for policy in template.find_resources("AWS::IAM::Policy").values():
        if {"Ref": role["Fn::GetAtt"][0]} in policy["Properties"]["Roles"]:
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                found = statement["Action"]
                actions |= {a for a in ([found] if isinstance(found, str) else found)}
    return {a for a in actions if a.startswith("kms:")}


def test_point1_only_the_web_functions_know_the_jwt_secret(template):
    functions = functions_by_service(template)
    for name in ("bunko-api", "bunko-stream"):
        env = functions[name]["Environment"]["Variables"]
        assert "BUNKO_JWT_SECRET_ARN" in env and "BUNKO_MODEL_KEYS_KMS_KEY_ID" in env
        assert kms_actions(template, name) == {"kms:Encrypt", "kms:Decrypt"}
    # The ingest function embeds with a workspace's own model config, so it decrypts that
    # config's API key, and never saves one; it signs nobody in.
    ingest_env = functions["bunko-ingest"]["Environment"]["Variables"]
    assert "BUNKO_JWT_SECRET_ARN" not in ingest_env
    assert "BUNKO_MODEL_KEYS_KMS_KEY_ID" in ingest_env
    assert kms_actions(template, "bunko-ingest") == {"kms:Decrypt"}


def web_app_origin(template, listed: str = "") -> dict:
    """`listed` + https://<the web app's CloudFront domain>, as CloudFormation joins it."""
    [cdn] = template.find_resources("AWS::CloudFront::Distribution")
    return {"Fn::Join": ["", [f"{listed}https://", {"Fn::GetAtt": [cdn, "DomainName"]}]]}


def test_point3_only_the_web_app_and_listed_origins_are_allowed(template, prod):
    # Default: the stack's own web app alone (its CloudFront origin, tests/infra/test_web),
    # on the app, the bucket's presigned uploads and the gateway's own errors.
    env = functions_by_service(template)["bunko-api"]["Environment"]["Variables"]
    assert env["BUNKO_CORS_ORIGINS"] == web_app_origin(template)
    template.has_resource_properties("AWS::S3::Bucket", {"CorsConfiguration": {"CorsRules": [
        Match.object_like({"AllowedOrigins": [web_app_origin(template)]}),
    ]}})  # fmt: skip
    # With a listed origin: it too, beside the web app's own origin.
    prod.has_resource_properties("AWS::S3::Bucket", {"CorsConfiguration": {"CorsRules": [
        Match.object_like({"AllowedOrigins": ["https://app.example.com", web_app_origin(prod)]}),
    ]}})  # fmt: skip
    for name in ("bunko-api", "bunko-stream"):
        env = functions_by_service(prod)[name]["Environment"]["Variables"]
        assert env["BUNKO_CORS_ORIGINS"] == web_app_origin(prod, "https://app.example.com,")


def test_point3_a_wildcard_origin_is_refused():
    with pytest.raises(ValueError, match="not '\\*'"):
        BunkoConfig(cors_origins=["*"])


def test_point4_binary_responses_include_pdf(template):
    [api] = template.find_resources("AWS::ApiGateway::RestApi").values()
    types = api["Properties"]["BinaryMediaTypes"]
    for needed in ("application/pdf", "application/octet-stream", "multipart/form-data"):
        assert needed in types
    assert "application/json" not in types and "*/*" not in types


def test_point6_the_endpoint_is_regional(template):
    template.has_resource_properties("AWS::ApiGateway::RestApi", {
        "EndpointConfiguration": {"Types": ["REGIONAL"]},
    })  # fmt: skip


def test_point7_gateway_errors_answer_in_the_apps_shape(template):
    responses = template.find_resources("AWS::ApiGateway::GatewayResponse")
    by_type = {r["Properties"]["ResponseType"]: r["Properties"] for r in responses.values()}
    too_large = by_type["REQUEST_TOO_LARGE"]
    assert too_large["StatusCode"] == "413"
    body = json.loads(too_large["ResponseTemplates"]["application/json"])
    assert body == {**body, "statusCode": 413, "error": HTTPStatus(413).phrase}  # as the app
    assert "/uploads/presign" in body["message"]
    assert (
        "/uploads/presign"
        in by_type["INTEGRATION_FAILURE"]["ResponseTemplates"]["application/json"]
    )


def test_point8_dev_has_no_standby_replicas_and_prod_has(template, prod):
    template.has_resource_properties(
        "AWS::OpenSearchServerless::Collection", {"StandbyReplicas": "DISABLED"}
    )
    prod.has_resource_properties(
        "AWS::OpenSearchServerless::Collection", {"StandbyReplicas": "ENABLED"}
    )


def test_point9_ingest_concurrency_is_bounded_one_record_per_invocation(template, prod):
    for tpl, concurrency, embed in ((template, 2, "2"), (prod, 10, "4")):
        tpl.has_resource_properties("AWS::Lambda::EventSourceMapping", {
            "BatchSize": 1,
            "ScalingConfig": {"MaximumConcurrency": concurrency},
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
        })  # fmt: skip
        env = functions_by_service(tpl)["bunko-ingest"]["Environment"]["Variables"]
        assert env["BUNKO_EMBED_CONCURRENCY"] == embed
    with pytest.raises(ValueError, match="maximumConcurrency"):
        BunkoConfig(ingest_concurrency=1)


def test_point11_policy_names_fit_32_characters_for_any_allowed_collection_name():
    longest = "a" * 28
    assert COLLECTION_NAME.fullmatch(longest)
    names = {policy_name(longest, kind) for kind in ("enc", "net", "data")}
    assert len(names) == 3 and all(len(n) <= 32 for n in names)
    assert policy_name("bunko", "data") == "bunko-data"  # short names stay readable
    assert policy_name("a" * 27 + "b", "data") != policy_name("a" * 28, "data")
    stack = cdk.Stack(cdk.App())
    SearchCollection(stack, "Search", name=longest, standby_replicas=False)
    for policy in (
        Template.from_stack(stack)
        .find_resources("AWS::OpenSearchServerless::SecurityPolicy")
        .values()
    ):
        assert len(policy["Properties"]["Name"]) <= 32
    with pytest.raises(ValueError, match="3–28"):
        SearchCollection(cdk.Stack(cdk.App()), "S", name="a" * 29, standby_replicas=False)


def test_point11_runtime_is_the_one_the_layer_compiles_bytecode_for(template):
    import sys

    runtime = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for props in functions_by_service(template).values():
        assert props["Runtime"] == runtime


def test_point12_api_function_ends_before_the_gateway_and_bedrock_before_it(template):
    api = functions_by_service(template)["bunko-api"]
    env = api["Environment"]["Variables"]
    budget, read = float(env["BUNKO_EMBED_MAX_SECONDS"]), float(env["BUNKO_BEDROCK_READ_TIMEOUT"])
    assert budget + read < api["Timeout"] < 29
    methods = template.find_resources("AWS::ApiGateway::Method").values()
    buffered = [m for m in methods if "ResponseTransferMode" not in m["Properties"]["Integration"]]
    for method in buffered:  # the gateway's default integration timeout: 29 s
        assert method["Properties"]["Integration"].get("TimeoutInMillis", 29000) == 29000


def test_the_stream_function_has_a_concurrency_cap_and_the_others_share_the_pool(template, prod):
    """Streams (chat, MCP) last up to 15 minutes: a cap keeps them from taking every slot of
    the account's concurrency from the api and ingest functions."""
    for tpl, cap in ((template, 10), (prod, 100)):
        functions = functions_by_service(tpl)
        assert functions["bunko-stream"]["ReservedConcurrentExecutions"] == cap
        assert "ReservedConcurrentExecutions" not in functions["bunko-api"]
        assert "ReservedConcurrentExecutions" not in functions["bunko-ingest"]
    with pytest.raises(ValueError, match="streamConcurrency"):
        BunkoConfig(stream_concurrency=1001)


def test_a_stream_cap_of_zero_leaves_the_function_uncapped(tmp_path_factory):
    app = cdk.App(
        context={"aws:cdk:bundling-stacks": [], "bunko:streamConcurrency": "0"},
        outdir=str(tmp_path_factory.mktemp("cdk.uncapped")),
    )
    _, stack = build_app(app)
    stream = functions_by_service(Template.from_stack(stack))["bunko-stream"]
    assert "ReservedConcurrentExecutions" not in stream
