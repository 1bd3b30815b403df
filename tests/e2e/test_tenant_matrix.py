"""One tenant-isolation matrix (issue 13, point 6), generated from the running server itself:
every REST operation in its OpenAPI document and every MCP tool in `tools/list` is called
as a second user (JWT for REST, an API key for MCP) with the first user's ids. The answer is
404 (403 for installation-admin routes) or a tool error, never the owner's data, and the
owner's state is byte-for-byte the same afterwards. A new route or tool is in the matrix the
day it is added; one taking an id this file cannot fill fails here until it is named below.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from typing import Any

import pytest
from mcp import MCPError

from bunko.domain.auth import SCOPE_READ, SCOPE_WRITE
from bunko.services.conversion.libreoffice import pdf_key
from tests.e2e.mcp_harness import http_client
from tests.e2e.openapi_values import resolved, sample_value
from tests.e2e.rest_harness import Rest, User, serve, wait_until_done

MARKER = "zanzibarowlmarker"  # a word only the owner's data contains
# Routes anyone may call and that take no id: they hold no workspace data.
PUBLIC = {"/auth/register", "/auth/login"}
# Acts on the caller alone (ends the intruder's own tokens): no id, no workspace data.
SELF_ONLY = {"/auth/logout"}
# Answers with the caller's own earlier requests (the audit trail of their library): the ids
# it may name are the ones the caller sent before, in the refused requests it records.
ECHOES = {"/audit"}
# Where a route's id parameter (path, query or form field) comes from in the owner's state.
ID_PARAMS = {
    "file_id": "doc_id",
    "config_id": "config_id",
    "conversion_id": "conversion_id",
    "user_id": "user_id",
    "replaceId": "doc_id",
    "key_id": "api_key_id",
    "conversation_id": "conversation_id",
    "conversationId": "conversation_id",  # POST /chat/stream's body
    "library_id": "library_id",
    "answer_id": "answer_id",  # the owner's answer (POST /answers/{answer_id}/mark)
    "export_id": "export_id",  # the owner's export of their shared library, and its import
    "import_id": "import_id",
}
# Parameters that name a file or search text rather than point at a record: the owner's name
# or words are sent, and the answer (in the caller's own workspace) must carry none of the
# owner's data.
NAME_PARAMS = {"file": "doc_path", "q": "words", "subfolder": "doc_path", "name": "source_name"}
# Installation-admin routes: a plain user is refused whatever the id.
ADMIN_ONLY = {
    "/users", "/users/{user_id}", "/users/{user_id}/password", "/drop-folder/subfolders/{subfolder}",
}  # fmt: skip


@pytest.fixture(scope="module")
def owner_and_intruder(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("tenants") / "data", allow_private_sources=True) as rest:
        owner, intruder = rest.new_user(), rest.new_user()
        yield rest, owner, intruder, _owner_state(rest, owner)


def _owner_state(rest: Rest, owner: User) -> dict[str, Any]:
    client = owner.client
    text = f"The {MARKER} nests in the owner's private archive."
    record = client.post("/upload", files={"file": ("private.txt", text.encode(), "text/plain")})
    doc = wait_until_done(client, record.json()["id"])
    assert doc["status"] == "completed", doc
    config = client.post(
        "/model-configs",
        json={"name": MARKER, "provider": "openai", "modelId": MARKER, "type": "llm",
              "apiKey": "sk-" + MARKER},
    )  # fmt: skip
    assert config.status_code in (200, 201), config.text
    workspace = rest.services.identity.authenticate(owner.token).workspace_id
    conversion_id = str(uuid.uuid4())
    rest.services.blobs.put(pdf_key(workspace, conversion_id), f"%PDF-1.4 {MARKER}".encode())
    assert client.put("/user-settings", json={"temperature": 0.2, "topK": 17}).status_code == 200
    api_key = client.post("/api-keys", json={"name": MARKER, "scopes": ["kb:read"]})
    assert api_key.status_code == 201, api_key.text
    chunks = rest.services.metadata.get_chunks(workspace, doc["id"])
    conversation = client.post("/conversations", json={"title": MARKER}).json()["id"]
    turn = {"message": f"Where does the {MARKER} nest?", "conversationId": conversation}
    with client.stream("POST", "/chat/stream", json=turn) as answer:
        said = answer.read().decode()
        assert answer.status_code == 200 and "[DONE]" in said
    answer_id = re.search(r'"answerId": "([^"]+)"', said).group(1)
    assert client.get(f"/conversations/{conversation}").json()["messageCount"] == 2
    source = client.post(
        "/sources", json={"kind": "web", "name": MARKER, "url": "http://127.0.0.1:9/"}
    )
    assert source.status_code == 201, source.text
    library = client.post("/libraries", json={"name": f"{MARKER} shelf"}).json()["id"]
    shelf = rest.client(owner.token)
    shelf.headers["X-Bunko-Library"] = library
    shared = shelf.post("/upload", files={"file": ("shelf.txt", text.encode(), "text/plain")})
    assert wait_until_done(shelf, shared.json()["id"])["status"] == "completed"
    export = client.post(f"/libraries/{library}/export", json={}).json()
    export = _ended(client, f"/libraries/{library}/export/{export['id']}")
    archive = client.get(export["download"]).content
    moved = client.post("/libraries/import", data={"name": f"{MARKER} copy"},
                        files={"file": ("a.zip", archive, "application/zip")}).json()  # fmt: skip
    moved = _ended(client, f"/libraries/import/{moved['id']}")
    assert (export["status"], moved["status"]) == ("done", "done"), (export, moved)
    return {
        "library_id": library,
        "shared_doc_id": shared.json()["id"],
        "doc_id": doc["id"],
        "doc_path": doc["name"],
        "words": "nests in the private archive",
        "source_name": MARKER,
        "config_id": config.json()["id"],
        "conversion_id": conversion_id,
        "user_id": owner.id,
        "api_key_id": api_key.json()["id"],
        "chunk_ids": [c.id for c in chunks],
        "conversation_id": conversation,
        "answer_id": answer_id,
        "workspace": workspace,
        "export_id": export["id"],
        "import_id": moved["id"],
    }


def _ended(client, path: str) -> dict:
    """A move's job once it has ended (it runs in the server's threads)."""
    for _ in range(600):
        job = client.get(path).json()
        if job["status"] != "running":
            return job
        time.sleep(0.1)
    raise AssertionError(f"{path} still running")


def _snapshot(rest: Rest, owner: User, state: dict[str, Any]) -> str:
    """Everything the owner can see and the stores hold for the owner's workspace."""
    client = owner.client
    ws = state["workspace"]
    seen = {
        path: client.get(path).json()
        for path in (
            "/knowledge-bases",
            "/model-configs",
            "/sources",
            "/user-settings",
            "/settings",
            "/api-keys",
            "/conversations",
            f"/conversations/{state['conversation_id']}",
            "/answers/marked",
            "/answers/settings",
        )
    }
    seen["chunks"] = [(c.id, c.content) for c in rest.services.metadata.iter_chunks(ws)]
    seen["index"] = rest.services.index.count(ws)
    library = state["library_id"]
    seen["libraries"] = client.get("/libraries").json()
    seen["members"] = client.get(f"/libraries/{library}/members").json()
    with_library = {"X-Bunko-Library": library}
    for path in ("/knowledge-bases", "/settings", "/api-keys", "/conversations"):
        seen[f"library {path}"] = client.get(path, headers=with_library).json()
    seen["library chunks"] = [c.id for c in rest.services.metadata.iter_chunks(library)]
    seen["library index"] = rest.services.index.count(library)
    seen["pdf"] = client.get(f"/libreoffice/files/{state['conversion_id']}.pdf").status_code
    return json.dumps(seen, sort_keys=True, default=str)


def _leaks(text: str, sent: str, state: dict[str, Any]) -> list[str]:
    """The owner's words and ids in an answer, beyond the ids the caller sent (a 404 may
    name the id it did not find)."""
    secrets = [MARKER, state["doc_id"], state["config_id"], state["conversion_id"],
               state["api_key_id"], state["conversation_id"], *state["chunk_ids"],
               state["library_id"], state["shared_doc_id"], state["answer_id"],
               state["export_id"], state["import_id"]]  # fmt: skip
    return [s for s in secrets if s in text and (s == MARKER or s not in sent)]


def _operations(spec: dict):
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            if path in PUBLIC or path in SELF_ONLY or not op.get("security"):
                continue
            yield path, method, op


def _call(client, spec: dict, path: str, method: str, op: dict, state: dict):
    """One request as the intruder; returns (response, whether it named an owner's id)."""
    uses_id = False
    url, query = path, {}
    for param in op.get("parameters", []):
        name = param["name"]
        if name in ID_PARAMS:
            value, uses_id = state[ID_PARAMS[name]], True
        elif name in NAME_PARAMS:
            value = state[NAME_PARAMS[name]]
        elif param.get("required"):
            pytest.fail(f"{method.upper()} {path}: name the source of {name!r} in ID_PARAMS")
        else:
            continue
        if param["in"] == "path":
            url = url.replace("{" + name + "}", value)
        else:
            query[name] = value
    kwargs: dict[str, Any] = {"params": query}
    content = op.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        schema = resolved(content["application/json"]["schema"], spec)
        kwargs["json"] = sample_value(schema, spec)
        for name in schema.get("properties", {}):
            if name in ID_PARAMS:  # a body field naming a record (chat's conversationId)
                kwargs["json"][name], uses_id = state[ID_PARAMS[name]], True
    elif "multipart/form-data" in content:
        form = resolved(content["multipart/form-data"]["schema"], spec)
        files, data = {}, {}
        for name, sub in form.get("properties", {}).items():
            sub = resolved(sub, spec)
            if sub.get("format") == "binary" or sub.get("contentMediaType"):
                files[name] = ("intruder.txt", b"intruder text", "text/plain")
            elif name in ID_PARAMS:
                data[name], uses_id = state[ID_PARAMS[name]], True
        kwargs.update(files=files, data=data)
    return client.request(method.upper(), url, **kwargs), uses_id


def test_every_rest_route_refuses_the_other_workspaces_ids(owner_and_intruder):
    rest, owner, intruder, state = owner_and_intruder
    spec = owner.client.get("/openapi.json").json()
    before = _snapshot(rest, owner, state)
    covered, sent_before = [], ""
    for path, method, op in _operations(spec):
        response, uses_id = _call(intruder.client, spec, path, method, op, state)
        where = f"{method.upper()} {path} → {response.status_code}"
        assert response.status_code < 500, where
        sent = str(response.request.url) + response.request.read().decode("latin-1")
        sent_before += sent
        assert not _leaks(response.text, sent_before if path in ECHOES else sent, state), where
        if path in ADMIN_ONLY:
            assert response.status_code == 403, where
        elif uses_id:
            assert response.status_code == 404, f"{where}: {response.text[:200]}"
        covered.append((method.upper(), path, uses_id))
    after = _snapshot(rest, owner, state)
    if after != before:  # name what changed
        old, new = json.loads(before), json.loads(after)
        changed = [k for k in old if old[k] != new.get(k)]
        raise AssertionError(f"an intruder's call changed the owner's data: {changed}")
    with_ids = sum(1 for *_, uses_id in covered if uses_id)
    print(f"\ntenant matrix: {len(covered)} REST operations, {with_ids} with the owner's ids")
    # file get/delete/chunks, replaceId, config get/put/delete, pdf, key, conversation
    # get/patch/delete, chat into a conversation
    assert with_ids >= 12


# What a viewer of the owner's library may still do there: read, and what is their own
# (their conversations, chat, keys with their read right, settings of their own, their
# browser session).
VIEWER_MAY = {
    ("POST", "/chat/stream"), ("POST", "/v1/chat/completions"), ("POST", "/conversations"),
    ("POST", "/api-keys"), ("PUT", "/user-settings"), ("POST", "/libraries"),
    ("POST", "/auth/change-password"), ("POST", "/auth/session"), ("POST", "/libreoffice/convert"),
    ("POST", "/research-api/corpora/search"), ("POST", "/libraries/import"),
}  # fmt: skip


def test_a_viewer_of_a_shared_library_changes_nothing_in_it(owner_and_intruder):
    """The roles in the matrix: every REST operation, called by a viewer of the owner's
    library in that library with the owner's ids, leaves the library as it was; the writes
    a viewer has no right to answer 403 (404 where the id is not the library's)."""
    rest, owner, _intruder, state = owner_and_intruder
    viewer = rest.new_user()
    added = owner.client.put(
        f"/libraries/{state['library_id']}/members",
        json={"username": viewer.username, "role": "viewer"},
    )
    assert added.status_code == 200, added.text
    viewer.client.headers["X-Bunko-Library"] = state["library_id"]
    library_state = {**state, "doc_id": state["shared_doc_id"]}
    spec = owner.client.get("/openapi.json").json()
    before = _snapshot(rest, owner, state)
    refused = []
    for path, method, op in _operations(spec):
        response, _ = _call(viewer.client, spec, path, method, op, library_state)
        where = f"{method.upper()} {path} → {response.status_code}"
        assert response.status_code < 500, where
        if method.upper() != "GET" and (method.upper(), path) not in VIEWER_MAY:
            assert response.status_code in (400, 403, 404, 405, 409, 422), (
                f"{where}: {response.text[:200]}"
            )
            refused.append(where)
    assert _snapshot(rest, owner, state) == before, "a viewer's call changed the library"
    assert any(r.startswith("POST /upload → 403") for r in refused), refused
    assert any(r.startswith("DELETE /knowledge-bases/{file_id} → 403") for r in refused), refused
    print(f"\nrole matrix: {len(refused)} writes refused to a viewer")


def _tool_arguments(tool, state: dict) -> list[dict]:
    """One call per way of pointing the tool at the owner's data."""
    schema = tool.input_schema
    props = schema.get("properties", {})
    base = {name: sample_value(sub, schema) for name, sub in props.items() if name in schema.get(
        "required", [])}  # fmt: skip
    for name, sub in props.items():
        if sub.get("type") == "string" and name in ("content", "query") and name in base:
            base[name] = MARKER  # a search for the owner's word
    ids = [name for name, sub in props.items() if resolved(sub, schema).get("format") == "uuid"]
    if not ids:
        return [base]
    variants = [state["doc_id"], *state["chunk_ids"][:1]]
    return [{**base, **dict.fromkeys(ids, value)} for value in variants]


async def _mcp_matrix(url: str, key: str, state: dict) -> list[tuple[str, bool, str, str]]:
    calls = []
    async with http_client(url, key) as client:
        tools = (await client.list_tools()).tools
        for tool in tools:
            for arguments in _tool_arguments(tool, state):
                try:
                    result = await client.call_tool(tool.name, arguments)
                except MCPError as exc:  # refused before the tool ran (scope)
                    calls.append((tool.name, True, str(exc), json.dumps(arguments)))
                    continue
                text = json.dumps([c.model_dump() for c in result.content], default=str)
                calls.append((tool.name, bool(result.is_error), text, json.dumps(arguments)))
    return calls


def test_every_mcp_tool_refuses_the_other_workspaces_ids(owner_and_intruder):
    rest, owner, intruder, state = owner_and_intruder
    key = rest.services.apikeys.create(
        workspace_id=rest.services.identity.authenticate(intruder.token).workspace_id,
        scopes=(SCOPE_READ, SCOPE_WRITE),
    )[1]
    before = _snapshot(rest, owner, state)
    calls = asyncio.run(_mcp_matrix(rest.url, key, state))
    mine = rest.services.identity.authenticate(intruder.token)
    owners = rest.services.identity.authenticate(owner.token)
    for name, is_error, text, sent in calls:
        if name == "list_activity" and not is_error:
            # The caller's own trail names whatever its calls named (the owner's ids it tried,
            # over REST and MCP alike): what must hold is that every event is its own.
            events = json.loads(json.loads(text)[0]["text"])["events"]
            assert events, "the intruder's trail lists its own refused calls"
            for event in events:
                assert event["libraryId"] in (None, mine.workspace_id), event
                assert owners.user_id not in (event["userId"], event["keyMaker"]), event
            continue
        assert not _leaks(text, sent, state), f"{name}: {text[:300]}"
    id_tools = {"get_item_by_id", "update_item", "delete_item", "get_document", "delete_document"}
    for name, is_error, text, _sent in calls:
        if name in id_tools:
            assert is_error, f"{name} answered for the owner's id: {text[:200]}"
    assert _snapshot(rest, owner, state) == before, (
        "an intruder's tool call changed the owner's data"
    )
    names = {name for name, *_ in calls}
    assert id_tools <= names
    print(f"\ntenant matrix: {len(names)} MCP tools, {len(calls)} calls")
