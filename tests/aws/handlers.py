"""Load the Lambda handler modules from functions/ (they are not a package: each folder is
one function's code asset) and the sample events from events/, and drive the functions as
the AWS tests do: API calls, uploads, the drop queue delivered, a person's workspace."""

from __future__ import annotations

import base64
import copy
import importlib.util
import json
import sys
import threading
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

from bunko import lambda_entry
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


def drain(aws_env, function) -> int:
    """Play the Lambda poller until the queue is empty; returns how many messages failed
    (each is deleted all the same: a failed message would come back, and the tests want none)."""
    template = load_event("sqs_s3_object_created.json")["Records"][0]
    failures = 0
    for _ in range(100):
        batch = aws_env.sqs.receive_message(
            QueueUrl=aws_env.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0
        ).get("Messages", [])
        if not batch:
            return failures
        records = [
            {**template, "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"],
             "body": m["Body"]}
            for m in batch
        ]  # fmt: skip
        result = function.handler({"Records": records}, FakeLambdaContext())
        failures += len({f["itemIdentifier"] for f in result["batchItemFailures"]})
        for m in batch:
            aws_env.sqs.delete_message(QueueUrl=aws_env.queue_url, ReceiptHandle=m["ReceiptHandle"])
    raise AssertionError("the ingest queue never drained")


def deliver(aws_env, drop_ingest) -> None:
    """Play the Lambda poller until the queue is empty; every message must succeed."""
    assert drain(aws_env, drop_ingest) == 0


def user_workspace(username: str) -> str:
    user = lambda_entry.api_app().state.services.accounts.auth.users.get_user_by_username(username)
    return user.workspace_id


def upload(api, token: str, filename: str, data: bytes) -> dict:
    body = multipart(filename, data, "text/markdown")
    event = api_event("POST", "/upload", headers={
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Content-Length": str(len(body)),
    })  # fmt: skip
    event["body"] = base64.b64encode(body).decode()  # a binary media type: base64 in the event
    event["isBase64Encoded"] = True
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 201, response["body"]
    return json.loads(response["body"])


BOUNDARY = "bunko-test-boundary"


def multipart(filename: str, data: bytes, content_type: str) -> bytes:
    return (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )


class QueuePump(threading.Thread):
    """SQS → the ingest function, as Lambda's event source mapping runs it (in this process;
    `sqs`: the client to poll with, by default one from the environment's endpoint, as the
    `bunko` processes reach moto's server)."""

    def __init__(self, queue_url: str, sqs=None) -> None:
        import boto3

        super().__init__(daemon=True)
        self.queue_url, self.sqs = queue_url, sqs or boto3.client("sqs")
        self.ingest = load_function("ingest")
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            batch = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
            ).get("Messages", [])
            for message in batch:
                event = load_event("sqs_ingest_job.json")
                event["Records"][0]["body"] = message["Body"]
                result = self.ingest.handler(event, FakeLambdaContext())
                if not result["batchItemFailures"]:
                    self.sqs.delete_message(
                        QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"]
                    )
            if not batch:
                self.halt.wait(0.05)

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=60)
