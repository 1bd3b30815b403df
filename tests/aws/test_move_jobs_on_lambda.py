"""A library's move through the doors as Lambda runs them: the API function invoked with API
Gateway's events in two execution environments (two apps, each with its own services and
clients, as two warm environments have), the work in the ingest function fed from the queue,
the archive in the bucket, over moto's server (DynamoDB, S3, SQS over HTTP) and osmem-server.

Environment A starts the export and is never asked again (an environment may be frozen once
it has answered); B polls it and hands out the download, a redirect to a signed GET of the
bucket that an HTTP client follows. Grace then imports the archive twice: through API
Gateway's body (under 10 MB), and by a signed PUT to the bucket; each import is polled from
the other environment, holds the same documents and ranks the same top hits. Each start is
one audit event."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import httpx
import pytest
from mangum import Mangum

from bunko import lambda_entry
from bunko.asgi.api_gateway import behind_api_gateway
from bunko.bootstrap import build_services
from bunko.config import Settings
from bunko.domain.audit import AuditQuery
from bunko.server_app import create_app
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, load_function
from tests.e2e.library_move import HANDBOOK, PASSWORD, documents, make_library, top_hits

pytestmark = pytest.mark.slow  # moto's and osmem's servers, the queue pump


class Environment:
    """One warm execution environment of the API function: its own services and app; the
    first is the function's handler itself (its calls are what the permission contract
    records as the API function's), another is built the same way beside it."""

    def __init__(self, handler: Any = None) -> None:
        self.services = None
        if handler is None:
            self.services = build_services(Settings(password_hash_cost="light"))
            app = behind_api_gateway(create_app(self.services), cors_origins=[])
            handler = Mangum(app, lifespan="off")
        self.handler = handler

    def invoke(self, method: str, path: str, *, token: str | None = None, json_body: Any = None,
               body: bytes | None = None, content_type: str | None = None,
               query: dict[str, str] | None = None) -> dict:  # fmt: skip
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if json_body is not None:
            body, content_type = json.dumps(json_body).encode(), "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        event = api_event(method, path, headers=headers)
        if body is not None:  # binary bodies come base64-encoded, as API Gateway sends them
            event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
        if query:
            event["queryStringParameters"] = query
            event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()}
        response = self.handler(event, FakeLambdaContext())
        if response.get("isBase64Encoded"):
            response["body"] = base64.b64decode(response["body"]).decode()
        return response

    def json(self, *args: Any, status: int = 200, **kwargs: Any) -> dict:
        response = self.invoke(*args, **kwargs)
        assert response["statusCode"] == status, response["body"]
        return json.loads(response["body"])

    def sign_in(self, username: str) -> str:
        body = {"username": username, "password": PASSWORD}
        return self.json("POST", "/auth/login", json_body=body)["access_token"]

    def close(self) -> None:
        if self.services is not None:
            self.services.close()


def _header(response: dict, name: str) -> str | None:
    for key, values in (response.get("multiValueHeaders") or {}).items():
        if key.lower() == name.lower():
            return values[0]
    return next((v for k, v in (response.get("headers") or {}).items() if k.lower() == name), None)


def _ended(env: Environment, token: str, path: str) -> dict:
    for _ in range(600):
        job = env.json("GET", path, token=token)
        if job["status"] != "running":
            return job
        time.sleep(0.2)
    raise AssertionError(f"{path} still running: {job}")


def _multipart(fields: dict[str, str], archive: bytes | None) -> tuple[bytes, str]:
    boundary = "bunko-move-boundary"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items()
    ]
    if archive is not None:
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            'filename="handbook.zip"\r\nContent-Type: application/zip\r\n\r\n'.encode()
            + archive + b"\r\n"
        )  # fmt: skip
    return b"".join(
        parts
    ) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


@pytest.fixture
def api_function(moto_deployment):
    """The API function as Lambda loads it (its app built on the first invocation)."""
    caches = (lambda_entry.api_app, lambda_entry.served_app)
    for cached in caches:
        cached.cache_clear()
    yield load_function("api").handler
    for cached in caches:
        cached.cache_clear()


def test_moves_started_in_one_environment_are_polled_downloaded_and_imported_from_another(
    moto_deployment, api_function
):
    operator = build_services(Settings(password_hash_cost="light"))
    a, b = Environment(api_function), Environment()
    try:
        library = make_library(operator)
        before, hits = documents(operator, library), top_hits(operator, library)
        ada_a, ada_b, grace_b = a.sign_in("ada"), b.sign_in("ada"), b.sign_in("grace")
        grace_a = a.sign_in("grace")
        trail = operator.audit.store
        events = trail.events(AuditQuery(limit=1)).total

        started = a.json("POST", f"/libraries/{library}/export", token=ada_a, json_body={},
                         status=202)  # fmt: skip
        # A answered: from now on only B is asked (A may be frozen, or gone)
        export = _ended(b, ada_b, f"/libraries/{library}/export/{started['id']}")
        assert (export["status"], export["documents"]) == ("done", len(HANDBOOK)), export
        link = export["download"].split("?link=")[1]
        path = export["download"].split("?")[0].removeprefix("/v1")
        for env in (b, a):  # either environment hands it out (no token: the link is its own)
            redirect = env.invoke("GET", path, query={"link": link})
            assert redirect["statusCode"] == 307, redirect
            signed = _header(redirect, "location")
            assert signed.startswith(moto_deployment["AWS_ENDPOINT_URL"]) and "moves/" in signed
            archive = httpx.get(signed, timeout=60)
            assert archive.status_code == 200 and len(archive.content) == export["bytes"]
            assert "Team Handbook.bunko.zip" in archive.headers["content-disposition"]

        # 1. the archive in API Gateway's body; started in A, polled from B
        body, kind = _multipart({"name": "Handbook on AWS"}, archive.content)
        moved = a.json("POST", "/libraries/import", token=grace_a, body=body, content_type=kind,
                       status=202)  # fmt: skip
        job = _ended(b, grace_b, f"/libraries/import/{moved['id']}")
        assert job["status"] == "done", job["error"]
        result = job["result"]
        assert (result["added"], result["indexed"], result["pending"]) == (len(HANDBOOK),) * 2 + (
            [],
        )
        assert result["revisionsAdded"] == 0 and result["answersAdded"] == 0
        assert documents(operator, job["libraryId"]) == before
        assert top_hits(operator, job["libraryId"]) == hits

        # 2. the archive PUT to the bucket by a signed URL, named by its key
        upload = a.json("POST", "/libraries/import/upload", token=grace_a,
                        json_body={"size": len(archive.content)}, status=201)  # fmt: skip
        assert upload["upload"].startswith("upload-")
        put = httpx.put(upload["url"], content=archive.content, headers=upload["headers"])
        assert put.status_code == 200, put.text
        # not Ada's to import: the key names its uploader
        body, kind = _multipart({"upload": upload["upload"]}, None)
        refused = b.invoke("POST", "/libraries/import", token=ada_b, body=body, content_type=kind)
        assert refused["statusCode"] == 404, refused
        body, kind = _multipart({"upload": upload["upload"], "name": "Handbook again"}, None)
        moved = a.json("POST", "/libraries/import", token=grace_a, body=body, content_type=kind,
                       status=202)  # fmt: skip
        again = _ended(b, grace_b, f"/libraries/import/{moved['id']}")
        assert again["status"] == "done" and again["result"]["indexed"] == len(HANDBOOK), again
        assert documents(operator, again["libraryId"]) == before
        assert top_hits(operator, again["libraryId"]) == hits

        # 3. an upload that is no archive: refused (400), and deleted from the bucket
        junk = a.json("POST", "/libraries/import/upload", token=grace_a,
                      json_body={"size": 64}, status=201)  # fmt: skip
        assert httpx.put(junk["url"], content=b"x" * 64, headers=junk["headers"]).is_success
        body, kind = _multipart({"upload": junk["upload"]}, None)
        bad = a.invoke("POST", "/libraries/import", token=grace_a, body=body, content_type=kind)
        assert bad["statusCode"] == 400 and "not a Bunko archive" in bad["body"], bad
        gone = a.invoke("POST", "/libraries/import", token=grace_a, body=body, content_type=kind)
        assert gone["statusCode"] == 404, gone

        page = trail.events(AuditQuery(limit=20))
        # one event a start (and the signed uploads, and the refusals), none for the polls
        assert page.total - events == 8
        assert [(e.action, e.status) for e in reversed(page.events[:8])] == [
            ("POST /libraries/{library_id}/export", 202), ("POST /libraries/import", 202),
            ("POST /libraries/import/upload", 201), ("POST /libraries/import", 404),
            ("POST /libraries/import", 202), ("POST /libraries/import/upload", 201),
            ("POST /libraries/import", 400), ("POST /libraries/import", 404),
        ]  # fmt: skip
    finally:
        a.close()
        b.close()
        operator.close()
