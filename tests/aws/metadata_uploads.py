"""Files uploaded with their metadata through the api function, and the ingest function fed
every job the queue holds (the AWS metadata tests)."""

from __future__ import annotations

import base64
import json

from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, load_event

BOUNDARY = "bunko-metadata-boundary"


def upload(api, token: str, name: str, text: str, metadata: dict | None) -> dict:
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: text/markdown\r\n\r\n{text}\r\n"
    ]
    if metadata is not None:
        parts.append(
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n'
            f"{json.dumps(metadata)}\r\n"
        )
    body = ("".join(parts) + f"--{BOUNDARY}--\r\n").encode()
    event = api_event("POST", "/upload", headers={
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Content-Length": str(len(body)),
    })  # fmt: skip
    event["body"] = base64.b64encode(body).decode()
    event["isBase64Encoded"] = True
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 201, response["body"]
    return json.loads(response["body"])


def ingest_all(aws_env, ingest) -> None:
    template = load_event("sqs_ingest_job.json")
    for message in aws_env.receive_all(aws_env.queue_url):
        event = json.loads(json.dumps(template))
        event["Records"][0]["body"] = message["Body"]
        assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}
