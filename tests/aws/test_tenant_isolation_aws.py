"""The tenant-isolation matrix on the AWS shape (issue 13, point 6).

The embedded matrix (tests/e2e/test_tenant_matrix.py) is generated from the local app's
OpenAPI document and MCP `tools/list`; the routes only the Lambda app serves (today
POST /uploads/presign, mounted where S3 can sign) are checked here, through the real api
handler (Mangum, API Gateway events) on moto. A second user asks for signed URLs with every
parameter presign could be talked into (the first user's workspace id, path and document id,
traversal, encoded separators, unknown fields, query parameters, headers): each answer is a
4xx with the error body or a key under the caller's own workspace. Every URL signed is then
PUT to moto's S3, whose notifications reach SQS and the ingest handler: each file lands in
the caller's workspace at the path presign answered, and nothing of the first user's changes.

`test_every_aws_only_route_has_a_tenant_test` makes the coverage automatic: a route the
Lambda app serves beyond the local app's OpenAPI routes fails it until a test here covers it.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
import requests
from fastapi.routing import iter_route_contexts

from bunko import lambda_entry
from bunko.adapters.aws.s3.drops import locate
from bunko.domain import DocumentStatus
from bunko.ports import SearchFilter
from bunko.server_app import create_app
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, call, drain, load_function, sign_in
from tests.aws.stand_ins import BUCKET, notify_queue
from tests.conftest import make_services

DROP = "drop/"
OWNER_PATH = "manuals/guide.md"
OWNER_TEXT = "The zanzibarowlmarker nests in the owner's private archive."
MARKER = "zanzibarowlmarker"  # a word only the owner's data contains


# --- the stand-in's plumbing: S3 notifications → SQS → the ingest function ---


def presign(api, token: str, body: Any, *, query: dict | None = None, headers: dict | None = None):
    """POST /uploads/presign through the api function; returns (status, body)."""
    raw = body if isinstance(body, str) else json.dumps(body)
    event = api_event("POST", "/uploads/presign", body=raw, headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}", **(headers or {}),
    })  # fmt: skip
    if query:
        event["queryStringParameters"] = query
        event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()}
    response = api.handler(event, FakeLambdaContext())
    return response["statusCode"], json.loads(response["body"])


def put(upload: dict, data: bytes) -> None:
    """The client's PUT, with exactly the headers presign answered (moto answers for S3)."""
    response = requests.put(upload["url"], data=data, headers=upload["headers"], timeout=10)
    assert response.status_code == 200, response.text


def services():
    return lambda_entry.ingest_handler().services


def workspace_of(username: str) -> str:
    users = lambda_entry.api_app().state.services.accounts.auth.users
    return users.get_user_by_username(username).workspace_id


def owns(workspace: str, obj: dict) -> bool:
    """An object of the workspace: its drops (`drop/<ws>/...`) or its blobs
    (`blobs/<kind>/<ws>/...`), not another workspace's file that names it in a folder."""
    parts = obj["Key"].split("/")
    return parts[:2] == ["drop", workspace] or (parts[0] == "blobs" and parts[2:3] == [workspace])


def owner_state(api, token: str, workspace: str) -> str:
    """Everything the owner sees and the stores hold for the owner's workspace."""
    s = services()
    docs = sorted(s.metadata.iter_documents(workspace), key=lambda d: d.id)
    objects = {}
    for page in s.blobs.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        objects |= {o["Key"]: o["ETag"] for o in page.get("Contents", []) if owns(workspace, o)}
    state = {
        "listing": call(api, "GET", "/knowledge-bases", token=token),
        "documents": [(d.id, d.path, d.revision, str(d.status), d.chunk_count) for d in docs],
        "chunks": [(c.id, c.content) for d in docs for c in s.metadata.get_chunks(workspace, d.id)],
        "index": s.index.count(workspace),
        "hits": [h.chunk_id for h in s.index.keyword_search(MARKER, SearchFilter(workspace), 10)],
        "objects": objects,
    }
    return json.dumps(state, sort_keys=True, default=str)


@pytest.fixture
def world(api_with_accounts, aws_env):
    """The owner's file, PUT through a presigned URL and indexed from S3's notification."""
    api, ingest = api_with_accounts, load_function("ingest")
    notify_queue(aws_env)
    owner, intruder = sign_in(api, "ada"), sign_in(api, "bob")
    status, upload = presign(api, owner, {
        "path": OWNER_PATH, "contentType": "text/markdown", "size": len(OWNER_TEXT.encode()),
    })  # fmt: skip
    assert status == 200, upload
    put(upload, OWNER_TEXT.encode())
    assert drain(aws_env, ingest) == 0
    owner_ws = workspace_of("ada")
    doc = services().metadata.get_document_by_path(owner_ws, OWNER_PATH)
    assert doc is not None and doc.status is DocumentStatus.COMPLETED
    assert services().index.keyword_search(MARKER, SearchFilter(owner_ws), 10)
    return {
        "api": api, "ingest": ingest, "aws": aws_env, "owner": owner, "intruder": intruder,
        "owner_ws": owner_ws, "intruder_ws": workspace_of("bob"), "doc_id": doc.id,
    }  # fmt: skip


def intruder_attempts(ws: str, doc_id: str) -> list[tuple[str, Any, dict, dict]]:
    """(what, body, query, headers): every way presign could be pointed at the owner's
    workspace (`ws`) or document (`doc_id`)."""
    path = OWNER_PATH
    attempts: list[tuple[str, Any, dict, dict]] = [
        ("the owner's path", {"path": path}, {}, {}),
        ("the owner's workspace as a folder", {"path": f"{ws}/{path}"}, {}, {}),
        ("an absolute path", {"path": f"/{ws}/{path}"}, {}, {}),
        ("the drop key as a path", {"path": f"{DROP}{ws}/{path}"}, {}, {}),
        ("the default alias", {"path": f"default/{path}"}, {}, {}),
        ("traversal", {"path": f"../{ws}/{path}"}, {}, {}),
        ("traversal after a folder", {"path": f"x/../../{ws}/{path}"}, {}, {}),
        ("dot then traversal", {"path": f"./../{ws}/{path}"}, {}, {}),
        ("backslash traversal", {"path": f"..\\{ws}\\{path}"}, {}, {}),
        ("percent-encoded traversal", {"path": f"%2e%2e/{ws}/{path}"}, {}, {}),
        ("percent-encoded slashes", {"path": f"..%2F{ws}%2F{path}"}, {}, {}),
        ("fullwidth slashes", {"path": f"..／{ws}／guide.md"}, {}, {}),
        ("a NUL byte", {"path": f"{path}\x00/../../{ws}/{path}"}, {}, {}),
        ("a newline", {"path": f"{path}\n{DROP}{ws}/{path}"}, {}, {}),
        ("a path too long", {"path": f"{ws}/" + "a" * 1100 + ".md"}, {}, {}),
        ("a key past S3's 1024 bytes", {"path": "が" * 200 + "/" + "が" * 150 + ".md"}, {}, {}),
        ("a hidden folder", {"path": f".{ws}/{path}"}, {}, {}),
        ("an Office lock file", {"path": "~$guide.md"}, {}, {}),
        ("traversal in the category", {"path": "cat.md", "category": f"../../{ws}"}, {}, {}),
        ("a header in the content type", {
            "path": "crlf.md",
            "contentType": f"text/markdown\r\nx-amz-meta-bunko-category: {ws}",
        }, {}, {}),
        ("workspace in the query", {"path": "query.md"},
         {"workspaceId": ws, "workspace_id": ws, "replaceId": doc_id}, {}),
        ("workspace in a header", {"path": "header.md"}, {},
         {"X-Workspace-Id": ws, "X-Bunko-Workspace": ws}),
        ("not JSON", "path=" + path, {}, {}),
    ]  # fmt: skip
    for field, value in [
        ("workspaceId", ws), ("workspace_id", ws), ("workspace", ws), ("replaceId", doc_id),
        ("replace_id", doc_id), ("documentId", doc_id), ("document_id", doc_id), ("id", doc_id),
        ("fileId", doc_id), ("key", f"{DROP}{ws}/{path}"), ("bucket", BUCKET),
        ("prefix", f"{DROP}{ws}/"),
    ]:  # fmt: skip
        attempts.append((f"an extra field {field}", {"path": path, field: value}, {}, {}))
    return attempts


def test_presign_never_signs_into_another_workspace(world):
    api, owner_ws, intruder_ws = world["api"], world["owner_ws"], world["intruder_ws"]
    before = owner_state(api, world["owner"], owner_ws)
    owned = json.loads(before)
    # The drop and the original (a UTF-8 text file is its own extracted text).
    assert owned["chunks"] and owned["hits"] and len(owned["objects"]) >= 2
    # The intruder signs in with a JWT and, as an agent would, with an API key of its own.
    status, key = call(api, "POST", "/api-keys", {"name": "agent", "scopes": ["kb:write"]},
                       token=world["intruder"])  # fmt: skip
    assert status == 201, key
    signed: list[tuple[str, dict]] = []
    refused: list[tuple[str, int]] = []
    for credential in (world["intruder"], key["key"]):
        for what, body, query, headers in intruder_attempts(owner_ws, world["doc_id"]):
            if isinstance(body, dict):
                body = {"size": 64, **body}  # the size every presign now declares
            status, answer = presign(api, credential, body, query=query, headers=headers)
            where = f"{what}: {status} {answer}"
            assert status < 500, where
            if status != 200:
                assert 400 <= status < 500, where
                assert {"statusCode", "message", "error"} <= answer.keys(), where
                assert answer["statusCode"] == status, where
                refused.append((what, status))
                continue
            # Signed: the key, the URL and where the ingest puts it all name the caller.
            assert answer["key"].startswith(f"{DROP}{intruder_ws}/"), where
            assert owner_ws not in answer["key"].split("/", 2)[1], where
            assert unquote(urlparse(answer["url"]).path).endswith(answer["key"]), where
            target = locate(answer["key"], drop_prefix=DROP)
            assert target is not None, f"{where}: signed a key the ingest would ignore"
            assert (target.workspace_id, target.path) == (intruder_ws, answer["path"]), where
            # ... and S3 would take the PUT: a key within its limit, headers a client can send.
            assert len(answer["key"].encode()) <= 1024, where
            assert all(v.isprintable() and v.isascii() for v in answer["headers"].values()), where
            signed.append((what, answer))
    assert signed and refused
    assert after_intruders_calls(world, before) == before, "presign changed the owner's data"

    # Every URL signed is used: the files land in the intruder's workspace, where presign said.
    for n, (_what, upload) in enumerate(signed):
        put(upload, f"Intruder file {n} overwrites nothing of anyone's.".encode())
    assert drain(world["aws"], world["ingest"]) == 0
    landed = {d.path: d for d in services().metadata.iter_documents(intruder_ws)}
    assert set(landed) == {upload["path"] for _, upload in signed}
    assert all(d.status is DocumentStatus.COMPLETED for d in landed.values())
    assert owner_state(api, world["owner"], owner_ws) == before, "an upload reached the owner"
    kinds = sorted({status for _, status in refused})
    print(f"\npresign tenant matrix: {len(signed) + len(refused)} calls, {len(signed)} signed "
          f"into the caller's workspace, {len(refused)} refused ({kinds})")  # fmt: skip


def after_intruders_calls(world, before: str) -> str:
    """The owner's state once the queue is drained (presign itself must have queued nothing)."""
    assert drain(world["aws"], world["ingest"]) == 0
    return owner_state(world["api"], world["owner"], world["owner_ws"])


# --- coverage: every route the Lambda app adds has a tenant test here ---

# Routes the Lambda app serves beyond the embedded app, and the test that checks each.
AWS_TENANT_TESTS = {
    ("POST", "/uploads/presign"): "test_presign_never_signs_into_another_workspace",
    ("POST", "/libraries/import/upload"): "test_an_archive_upload_is_imported_by_its_uploader_only",
}
# Routes outside the OpenAPI document that both shapes serve: the MCP endpoint (its tools are
# the embedded matrix's `tools/list` half), and documents that hold no workspace data.
NOT_IN_OPENAPI = {
    "/mcp": "MCP: tests/e2e/test_tenant_matrix.py calls every tool",
    "/.well-known/oauth-protected-resource": "RFC 9728 metadata, the same for everyone",
    "/.well-known/oauth-protected-resource/mcp": "RFC 9728 metadata, the same for everyone",
    "/.well-known/oauth-authorization-server": "RFC 8414 metadata, the same for everyone",
    "/.well-known/openid-configuration": "RFC 8414 metadata, the same for everyone",
    "/": "the web app's page", "/config.json": "the web app's API base",
    "/static/{path}": "the web app's assets",
    "/openapi.json": "the API's description", "/docs": "the API's description",
    "/docs/oauth2-redirect": "the API's description", "/redoc": "the API's description",
    "/docs/assets/{path}": "Swagger UI's and ReDoc's scripts (http/api_docs.py)",
}  # fmt: skip


def routes(app) -> set[tuple[str, str]]:
    """(method, path) for every route of an app, included routers and mounts ('*') too."""
    return {
        (method, route.path_format)
        for route in iter_route_contexts(app.routes)
        for method in sorted(route.methods or {"*"})
    }


def _import_upload(api, token: str, upload: str) -> tuple[int, dict]:
    """POST /libraries/import naming a signed upload, as a browser's form sends it."""
    boundary = "tenant-boundary"
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="upload"\r\n\r\n'
            f"{upload}\r\n--{boundary}--\r\n")  # fmt: skip
    event = api_event("POST", "/libraries/import", body=body, headers={
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={boundary}",
    })  # fmt: skip
    response = api.handler(event, FakeLambdaContext())
    return response["statusCode"], json.loads(response["body"])


def test_an_archive_upload_is_imported_by_its_uploader_only(api_with_accounts, aws_env):
    """An archive PUT by a signed URL is named by a key that carries its uploader: another
    person (or their key, or a key twisted to look like theirs) cannot import it."""
    api = api_with_accounts
    owner, intruder = sign_in(api, "ada"), sign_in(api, "bob")
    status, mine = call(api, "POST", "/libraries/import/upload", {"size": 64}, token=owner)
    assert status == 201, mine
    key = mine["upload"]
    requests.put(mine["url"], data=b"x" * 64, headers=mine["headers"], timeout=30)
    status, theirs = call(api, "POST", "/libraries/import/upload", {"size": 64}, token=intruder)
    assert status == 201 and theirs["upload"].split("-")[1] != key.split("-")[1], theirs
    status, agent = call(api, "POST", "/api-keys", {"name": "agent", "scopes": ["kb:write"]},
                         token=intruder)  # fmt: skip
    assert status == 201, agent
    bob_prefix = theirs["upload"].rsplit("-", 1)[0]
    for credential, upload, refused in (
        (intruder, key, 404),  # not theirs
        (intruder, f"{bob_prefix}-{key[-32:]}", 404),  # theirs in name only: no such object
        (intruder, f"{bob_prefix}-../{key[-32:]}", 400),  # the pattern refuses it
        (agent["key"], key, 403),  # a key imports nothing
    ):
        status, answer = _import_upload(api, credential, upload)
        assert status == refused, (upload, answer)
    status, answer = _import_upload(api, owner, key)
    assert status == 400 and "not a Bunko archive" in answer["message"], answer  # read: its own
    assert _import_upload(api, owner, key)[0] == 404  # a refused upload is deleted


def test_every_aws_only_route_has_a_tenant_test(api_with_accounts, tmp_path):
    aws_routes = routes(lambda_entry.api_app())
    # backend="local" explicitly: the environment here names the AWS one.
    local_services = make_services(tmp_path / "data", backend="local", embedder="none")
    try:
        local = create_app(local_services)
        spec = local.openapi()
        local_routes = routes(local)
    finally:
        local_services.close()
    in_openapi = {(m.upper(), path) for path, ops in spec["paths"].items() for m in ops}
    beyond = aws_routes - in_openapi
    aws_only = beyond - local_routes
    unexplained = sorted(r for r in beyond & local_routes if r[1] not in NOT_IN_OPENAPI)
    assert not unexplained, f"served outside OpenAPI, in no tenant matrix: {unexplained}"
    uncovered = sorted(aws_only - AWS_TENANT_TESTS.keys())
    assert not uncovered, f"AWS-only routes without a tenant test here: {uncovered}"
    for test in AWS_TENANT_TESTS.values():
        assert callable(globals().get(test)), f"{test} is named but not defined"
    # The comparison sees what only the Lambda app mounts (presign needs S3 to sign).
    assert ("POST", "/uploads/presign") in aws_only
    print(f"\nAWS-only routes: {sorted(aws_only)}; {len(in_openapi)} operations in both shapes")
