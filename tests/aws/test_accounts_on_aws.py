"""Accounts on AWS: with the JWT secret (Secrets Manager) and the model-key KMS key
configured, the Lambda app registers and logs users in against DynamoDB, and API keys for
agents live in the same table — under moto, through Mangum, fed the API Gateway event shape."""

from __future__ import annotations

import copy
import json

import boto3
import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.domain.auth import SCOPE_READ
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import load_event, load_function
from tests.aws.stand_ins import REGION


@pytest.fixture
def api_with_accounts(aws_env, monkeypatch):
    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="bunko-jwt", SecretString="s" * 48
    )
    key = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"]
    monkeypatch.setenv("BUNKO_JWT_SECRET_ARN", secret["ARN"])
    monkeypatch.setenv("BUNKO_MODEL_KEYS_KMS_KEY_ID", key)
    return load_function("api")


def call(api, method: str, path: str, body: dict | None = None, token: str | None = None):
    event = copy.deepcopy(load_event("api_get_health.json"))
    event.update(httpMethod=method, path=path, resource="/{proxy+}")
    event["headers"] = {**event["headers"], "Content-Type": "application/json"}
    if token:
        event["headers"]["Authorization"] = f"Bearer {token}"
    event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
    event["body"] = json.dumps(body) if body is not None else None
    response = api.handler(event, FakeLambdaContext())
    return response["statusCode"], json.loads(response["body"])


def test_register_login_and_api_keys_on_dynamodb(api_with_accounts):
    api = api_with_accounts
    status, body = call(
        api, "POST", "/auth/register", {"username": "ada", "password": "correct horse battery"}
    )
    assert status == 201, body
    status, body = call(
        api, "POST", "/auth/login", {"username": "ada", "password": "correct horse battery"}
    )
    assert status == 200, body
    token = body["access_token"]
    status, files = call(api, "GET", "/knowledge-bases", token=token)
    assert status == 200 and files == []
    status, body = call(
        api, "POST", "/auth/login", {"username": "ada", "password": "wrong password!"}
    )
    assert status == 401 and body["statusCode"] == 401

    from bunko.adapters.aws import lambda_runtime

    services = lambda_runtime.api_app().state.services
    assert services.apikeys is not None
    record, secret = services.apikeys.create(
        workspace_id=DEFAULT_WORKSPACE_ID, scopes=[SCOPE_READ], name="agent"
    )
    principal = services.identity.authenticate(secret)
    assert principal.has(SCOPE_READ) and principal.api_key_id == record.id
