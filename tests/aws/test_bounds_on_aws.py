"""Issue 46's bounds and names on the AWS shape: the API handler with events as API Gateway
sends them, over DynamoDB on moto. Library names keep their rules on DynamoDB's name claims,
conversations are counted per person across libraries, a spoofed X-Forwarded-For does not
reset the login lockout (the client is API Gateway's source IP), and an anonymous /health
says only that the API is up."""

from __future__ import annotations

import json

import pytest

from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, call, sign_in


@pytest.fixture
def bounded_api(monkeypatch, request):
    monkeypatch.setenv("BUNKO_CONVERSATION_MAX_PER_USER", "2")
    monkeypatch.setenv("BUNKO_LIBRARIES_PER_USER", "2")
    return request.getfixturevalue("api_with_accounts")


def send(bounded_api, method: str, path: str, body: dict | None = None, **headers: str):
    event = api_event(method, path, body=json.dumps(body) if body is not None else None,
                      headers={"Content-Type": "application/json", **headers})  # fmt: skip
    response = bounded_api.handler(event, FakeLambdaContext())
    return response["statusCode"], json.loads(response["body"])


def test_library_names_and_counts_per_person_on_dynamodb(bounded_api):
    ada = sign_in(bounded_api, "ada")
    sign_in(bounded_api, "grace")
    status, shelf = call(bounded_api, "POST", "/libraries", {"name": "Team Docs"}, token=ada)
    assert status == 201, shelf
    for refused, code in (
        ({"name": "Теаm Docs"}, 409),  # Cyrillic lookalike of a library
        ({"name": "GRACE"}, 409),  # a username
        ({"name": "6f1c2a4e-0b7d-4c1e-9a55-3f2b8d9e7a10"}, 400),  # a UUID
        ({"name": "Te\u200bam"}, 400),  # a zero-width space
    ):
        assert call(bounded_api, "POST", "/libraries", refused, token=ada)[0] == code, refused
    assert call(bounded_api, "POST", "/libraries", {"name": "Second"}, token=ada)[0] == 201
    assert call(bounded_api, "POST", "/libraries", {"name": "Third"}, token=ada)[0] == 429

    auth = {"Authorization": f"Bearer {ada}"}
    assert send(bounded_api, "POST", "/conversations", {"title": "a"}, **auth)[0] == 201
    in_shelf = {**auth, "X-Bunko-Library": shelf["id"]}
    assert send(bounded_api, "POST", "/conversations", {"title": "b"}, **in_shelf)[0] == 201
    assert send(bounded_api, "POST", "/conversations", {"title": "c"}, **in_shelf)[0] == 429


def test_a_spoofed_forwarded_for_does_not_reset_the_lockout_on_aws(bounded_api):
    sign_in(bounded_api, "ada")
    for i in range(5):  # BUNKO_LOGIN_MAX_FAILURES
        status, _ = send(bounded_api, "POST", "/auth/login", {"username": "ada", "password": f"guess {i}"},
                         **{"X-Forwarded-For": f"203.0.113.{i}"})  # fmt: skip
        assert status == 401
    status, body = send(bounded_api, "POST", "/auth/login",
                        {"username": "ada", "password": "correct horse battery"},
                        **{"X-Forwarded-For": "198.51.100.7"})  # fmt: skip
    assert status == 429, body


def test_anonymous_health_says_only_that_the_api_is_up(bounded_api):
    status, body = send(bounded_api, "GET", "/health")
    assert status == 200 and set(body) == {"status", "version"}
    token = sign_in(bounded_api, "ada")
    status, body = send(bounded_api, "GET", "/health", Authorization=f"Bearer {token}")
    assert status == 200 and body["backend"] == "aws"
