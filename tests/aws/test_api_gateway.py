"""The functions as API Gateway reaches them, fed stage-prefixed events (`/v1`): URLs the app
builds keep the stage, bodies over Lambda's payload limit get the app's 413, CORS answers
only the allowed origin, and the ingest function runs without the JWT secret."""

from __future__ import annotations

import base64
import json

import pytest

from bunko.asgi.api_gateway import API_BODY_LIMIT, base_path
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, load_event, load_function
from tests.aws.stand_ins import BUCKET

HOST = "https://abcdef1234.execute-api.us-east-1.amazonaws.com"
WEB_APP = "https://app.example.com"


def invoke(api, event: dict) -> dict:
    response = api.handler(event, FakeLambdaContext())
    if response.get("isBase64Encoded"):
        response["body"] = base64.b64decode(response["body"]).decode()
    return response


def header(response: dict, name: str) -> str | None:
    for key, values in (response.get("multiValueHeaders") or {}).items():
        if key.lower() == name.lower():
            return values[0]
    for key, value in (response.get("headers") or {}).items():
        if key.lower() == name.lower():
            return value
    return None


def test_docs_link_the_openapi_document_under_the_stage(aws_env):
    api = load_function("api")
    response = invoke(api, api_event("GET", "/docs"))
    assert response["statusCode"] == 200
    assert "'/v1/openapi.json'" in response["body"] or '"/v1/openapi.json"' in response["body"]
    assert invoke(api, api_event("GET", "/openapi.json"))["statusCode"] == 200


def test_mcp_challenge_and_protected_resource_name_the_stage(api_with_accounts):
    api = api_with_accounts
    response = invoke(api, api_event("POST", "/mcp", body="{}", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    }))  # fmt: skip
    assert response["statusCode"] == 401
    challenge = header(response, "WWW-Authenticate")
    assert f'resource_metadata="{HOST}/v1/.well-known/oauth-protected-resource/mcp"' in challenge
    metadata = invoke(api, api_event("GET", "/.well-known/oauth-protected-resource/mcp"))
    assert metadata["statusCode"] == 200
    assert json.loads(metadata["body"])["resource"] == f"{HOST}/v1/mcp"


def test_bunkos_authorization_server_metadata_answers_under_the_stage(
    api_with_accounts, monkeypatch
):
    """With an issuer whose discovery lists no S256 (Cognito's), Bunko names itself, with its
    stage, as the authorization server; a client appends /.well-known/openid-configuration
    to that issuer (the path-inserted RFC 8414 address lies outside the stage, where API
    Gateway routes nothing), and finds the same document under either name."""
    from tests.aws.handlers import load_function
    from tests.oidc_issuer import oidc_issuer

    with oidc_issuer() as issuer:
        monkeypatch.setenv("BUNKO_OIDC_ISSUER", issuer.url)
        monkeypatch.setenv("BUNKO_OIDC_AUDIENCE", f"{HOST}/v1/mcp")
        api = load_function("api")
        resource = invoke(api, api_event("GET", "/.well-known/oauth-protected-resource/mcp"))
        assert json.loads(resource["body"])["authorization_servers"] == [f"{HOST}/v1"]
        for path in ("openid-configuration", "oauth-authorization-server"):
            answer = invoke(api, api_event("GET", f"/.well-known/{path}"))
            assert answer["statusCode"] == 200, answer["body"]
            document = json.loads(answer["body"])
            assert document["issuer"] == f"{HOST}/v1"
            assert document["code_challenge_methods_supported"] == ["S256"]
            assert document["token_endpoint"] == issuer.metadata()["token_endpoint"]


def test_base_path_also_comes_from_the_web_adapters_context_header():
    context = json.dumps({"stage": "v1", "path": "/v1/mcp"}).encode()
    scope = {"type": "http", "path": "/mcp", "headers": [(b"x-amzn-request-context", context)]}
    assert base_path(scope) == "/v1"
    # A custom domain's base path mapping (`kb`) is what stands in front, not the stage.
    event = {"requestContext": {"stage": "v1", "path": "/kb/health"}}
    assert base_path({"type": "http", "path": "/health", "aws.event": event}) == "/kb"
    assert base_path({"type": "http", "path": "/health", "headers": []}) == ""


def test_body_over_the_invoke_limit_gets_the_apps_413(aws_env):
    api = load_function("api")
    event = api_event("POST", "/documents/upload", body="", headers={
        "Content-Type": "application/octet-stream", "Content-Length": str(API_BODY_LIMIT + 1),
    })  # fmt: skip
    response = invoke(api, event)
    assert response["statusCode"] == 413
    body = json.loads(response["body"])
    assert body["statusCode"] == 413 and "/uploads/presign" in body["message"]
    # 4 MiB base64-encoded plus the event's envelope still fits Lambda's 6 MB invoke payload.
    assert len(base64.b64encode(b"x" * API_BODY_LIMIT)) + 64 * 1024 < 6 * 1024 * 1024


@pytest.fixture
def api_with_cors(aws_env, monkeypatch):
    monkeypatch.setenv("BUNKO_CORS_ORIGINS", WEB_APP)
    return load_function("api")


def test_preflight_from_the_web_app_is_answered(api_with_cors):
    preflight = api_event("OPTIONS", "/search", headers={
        "Origin": WEB_APP, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    })  # fmt: skip
    response = invoke(api_with_cors, preflight)
    assert response["statusCode"] == 200
    assert header(response, "Access-Control-Allow-Origin") == WEB_APP
    assert "POST" in header(response, "Access-Control-Allow-Methods")
    health = invoke(api_with_cors, api_event("GET", "/health", headers={"Origin": WEB_APP}))
    assert header(health, "Access-Control-Allow-Origin") == WEB_APP


def test_a_browser_mcp_client_may_send_the_protocol_version_and_resume(api_with_cors):
    """After initialize, MCP clients send MCP-Protocol-Version on every request, and
    Last-Event-ID when they resume a stream: a preflight that refuses them stops a browser
    client at its second request."""
    preflight = api_event("OPTIONS", "/mcp", headers={
        "Origin": WEB_APP, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type,mcp-protocol-version,"
                                          "last-event-id",
    })  # fmt: skip
    response = invoke(api_with_cors, preflight)
    assert response["statusCode"] == 200
    allowed = header(response, "Access-Control-Allow-Headers").lower()
    assert "mcp-protocol-version" in allowed and "last-event-id" in allowed


def test_other_origins_get_no_cors_headers(api_with_cors):
    preflight = api_event("OPTIONS", "/search", headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
    })  # fmt: skip
    response = invoke(api_with_cors, preflight)
    assert response["statusCode"] == 400
    assert header(response, "Access-Control-Allow-Origin") is None
    health = invoke(
        api_with_cors, api_event("GET", "/health", headers={"Origin": "https://evil.example"})
    )
    assert header(health, "Access-Control-Allow-Origin") is None


def test_no_cors_headers_when_no_origin_is_configured(aws_env):
    api = load_function("api")
    response = invoke(api, api_event("GET", "/health", headers={"Origin": WEB_APP}))
    assert response["statusCode"] == 200
    assert header(response, "Access-Control-Allow-Origin") is None


def test_ingest_never_reads_the_jwt_secret(aws_env, monkeypatch):
    # Point 1: a secret the ingest role may not read (here: one that does not exist, which
    # moto answers with a ClientError) must not stop a drop from being indexed.
    monkeypatch.setenv(
        "BUNKO_JWT_SECRET_ARN", "arn:aws:secretsmanager:us-east-1:123456789012:secret:nope"
    )
    monkeypatch.setenv("BUNKO_MODEL_KEYS_KMS_KEY_ID", "no-such-key")
    ingest = load_function("ingest")
    aws_env.s3.put_object(Bucket=BUCKET, Key="drop/default/manuals/検索 guide.md", Body=b"text")
    event = load_event("sqs_s3_object_created.json")
    assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}


def test_api_names_an_unreadable_jwt_secret_as_a_deployment_error(aws_env, monkeypatch):
    from bunko.bootstrap.aws import DeploymentError

    monkeypatch.setenv(
        "BUNKO_JWT_SECRET_ARN", "arn:aws:secretsmanager:us-east-1:123456789012:secret:nope"
    )
    monkeypatch.setenv("BUNKO_MODEL_KEYS_KMS_KEY_ID", "no-such-key")
    from bunko import lambda_entry

    with pytest.raises(DeploymentError, match="ResourceNotFoundException"):
        lambda_entry.api_app()
