"""Accounts on AWS: with the JWT secret (Secrets Manager) and the model-key KMS key
configured, the Lambda app registers and logs users in against DynamoDB, and API keys for
agents live in the same table — under moto, through Mangum, fed the API Gateway event shape."""

from __future__ import annotations

from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.domain.auth import SCOPE_READ
from tests.aws.handlers import call


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

    from bunko import lambda_entry

    services = lambda_entry.api_app().state.services
    assert services.apikeys is not None
    record, secret = services.apikeys.create(
        workspace_id=DEFAULT_WORKSPACE_ID, scopes=[SCOPE_READ], name="agent"
    )
    principal = services.identity.authenticate(secret)
    assert principal.has(SCOPE_READ) and principal.api_key_id == record.id
