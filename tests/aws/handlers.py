"""Load the Lambda handler modules from functions/ (they are not a package: each folder is
one function's code asset) and the sample events from events/."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

from tests.aws.conftest import FakeLambdaContext

REPO_ROOT = Path(__file__).resolve().parents[2]


def load_function(name: str, module: str = "handler") -> ModuleType:
    path = REPO_ROOT / "functions" / name / f"{module}.py"
    qualified = f"bunko_function_{name}_{module}"
    spec = importlib.util.spec_from_file_location(qualified, path)
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def load_event(name: str) -> dict:
    return json.loads((REPO_ROOT / "events" / name).read_text(encoding="utf-8"))


def api_event(
    method: str, path: str, *, body: str | None = None, headers: dict | None = None
) -> dict:
    """A REST proxy event as API Gateway sends it: `path` without the stage, the stage in
    `requestContext.path` (the sample's stage, /v1)."""
    event = copy.deepcopy(load_event("api_get_health.json"))
    stage = event["requestContext"]["stage"]
    event.update(httpMethod=method, path=path, resource="/{proxy+}")
    event["pathParameters"] = {"proxy": path.lstrip("/")}
    event["requestContext"].update(
        httpMethod=method, path=f"/{stage}{path}", resourcePath="/{proxy+}"
    )
    event["headers"] = {**event["headers"], **(headers or {})}
    event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
    event["body"] = body
    return event


def call(api, method: str, path: str, body: dict | None = None, token: str | None = None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    payload = json.dumps(body) if body is not None else None
    response = api.handler(api_event(method, path, body=payload, headers=headers),
                           FakeLambdaContext())  # fmt: skip
    return response["statusCode"], json.loads(response["body"])


def get(api, token: str, path: str, query: dict) -> tuple[int, object]:
    """A GET with a query string through the API handler, as API Gateway passes it."""
    event = api_event("GET", path, headers={"Authorization": f"Bearer {token}"})
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()}
    response = api.handler(event, FakeLambdaContext())
    return response["statusCode"], json.loads(response["body"])


def sign_in(api, username: str = "ada", password: str = "correct horse battery") -> str:
    """Register (if needed) and log in through the API handler; returns the access token."""
    call(api, "POST", "/auth/register", {"username": username, "password": password})
    status, body = call(api, "POST", "/auth/login", {"username": username, "password": password})
    assert status == 200, body
    return body["access_token"]


def presign(api, token: str, body: dict) -> tuple[int, dict]:
    """POST /uploads/presign through the API handler: (status, answer)."""
    event = api_event("POST", "/uploads/presign", body=json.dumps(body), headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}",
    })  # fmt: skip
    response = api.handler(event, FakeLambdaContext())
    return response["statusCode"], json.loads(response["body"])


def created_event(key: str) -> dict:
    """The SQS message S3's notification sends for an object created at `key`."""
    event = load_event("sqs_s3_object_created.json")
    body = json.loads(event["Records"][0]["body"])
    body["Records"][0]["s3"]["object"]["key"] = quote(key)
    event["Records"][0]["body"] = json.dumps(body)
    return event
