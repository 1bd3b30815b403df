"""The audit trail over a real server (issue 50, point 1): every REST route and MCP tool that
changes something leaves exactly one event, enumerated from the app's routes and the MCP
server's tool list; a viewer's refused write, an outsider's refused entry and a failed
sign-in leave one refused or failed event each; owners read their library's trail, admins
all of it, viewers get 403; nothing typed (a password, a document's text) is kept."""

from __future__ import annotations

import json
import re
import uuid

import pytest

from bunko.asgi.audit import MCP_PATH, READ_METHODS
from bunko.domain.audit import AuditQuery
from bunko.http.app import route_shapes
from bunko.http.deps import reads_only
from bunko.server_app import create_app
from tests.e2e.cli_harness import run
from tests.e2e.mcp_harness import http_client, mcp_error_in
from tests.e2e.rest_harness import ADMIN, assert_error, wait_until_done

SECRET_TEXT = "Zebra-quartz-ledger 4417: the vault code."


def _count(rest) -> int:
    return rest.services.audit.store.events(AuditQuery(limit=1)).total


def _latest(rest, n: int = 1):
    return rest.services.audit.store.events(AuditQuery(limit=n)).events


async def _call(client, name: str, arguments: dict) -> bool:
    """Call a tool; True when it answered without an error (the client raises tool errors)."""
    try:
        result = await client.call_tool(name, arguments)
    except BaseException as exc:  # an ExceptionGroup holding the tool's error
        if mcp_error_in(exc) is None:
            raise
        return False
    return not result.is_error


def _writes(app) -> list[tuple[str, str, bool]]:
    """(method, path template, marked read-only) of every route that may change something:
    every method but GET/HEAD/OPTIONS, MCP's own endpoint aside (its tools are walked)."""
    from fastapi.routing import iter_route_contexts

    marked: set[tuple[str, str]] = set()
    for r in iter_route_contexts(app.routes):
        deps = getattr(getattr(r.original_route, "dependant", None), "dependencies", [])
        if any(d.call is reads_only for d in deps):
            marked |= {(m, r.path_format) for m in r.methods or ()}
    found = []
    for template, methods in route_shapes(app):
        if template == MCP_PATH or not methods:
            continue
        for method in sorted(set(methods) - READ_METHODS):
            found.append((method, template, (method, template) in marked))
    return found


def test_every_rest_route_that_changes_something_leaves_exactly_one_event(rest):
    app = create_app(rest.services)  # the same routes the live server serves
    routes = _writes(app)
    assert len(routes) > 30 and any(read for *_, read in routes)  # the walk sees them all
    seen = []
    for method, template, read in routes:
        admin = rest.admin()  # a fresh sign-in each time: one route signs out
        path = re.sub(r"\{\w+\}", lambda _: str(uuid.uuid4()), template)
        before = _count(rest)
        response = admin.client.request(method, path, json={})
        added = _count(rest) - before
        expected = 0 if read and response.status_code not in (401, 403, 404) else 1
        assert added == expected, (method, template, response.status_code, added)
        if expected:
            event = _latest(rest)[0]
            assert event.action == f"{method} {template}"
            assert event.status == response.status_code and event.client == "127.0.0.1"
            signs_in = template in ("/auth/register", "/auth/login") or "/session" in template
            if not signs_in and response.status_code != 401:  # those take no bearer
                assert event.user_id == admin.id, (template, event)
        seen.append((method, template, response.status_code))
    print(f"\n{len(seen)} write routes walked: {seen}")


@pytest.mark.anyio
async def test_every_mcp_tool_that_changes_something_leaves_exactly_one_event(rest):
    admin = rest.admin()
    key = admin.client.post("/api-keys", json={"name": "agent", "scopes": ["kb:read", "kb:write",
                            "agent:research", "admin"]}).json()  # fmt: skip
    async with http_client(rest.url, key["key"]) as client:
        tools = (await client.list_tools()).tools
        writes = [t for t in tools if not (t.annotations and t.annotations.read_only_hint)]
        reads = [t for t in tools if t.annotations and t.annotations.read_only_hint]
        assert len(writes) >= 5 and reads
        for tool in writes:
            before = _count(rest)
            # most refuse {} as invalid arguments: a failed call is one event too
            answered = await _call(client, tool.name, {})
            assert _count(rest) - before == 1, tool.name
            event = _latest(rest)[0]
            outcome = "ok" if answered else "failed"
            assert (event.action, event.door, event.outcome) == (f"mcp:{tool.name}", "mcp",
                                                                 outcome)  # fmt: skip
            assert (event.api_key_id, event.key_maker) == (key["id"], admin.id)
        before = _count(rest)
        for tool in reads[:3]:
            await _call(client, tool.name, {})
        assert _count(rest) == before  # reads that were not refused leave nothing
        assert await _call(client, "add_item_text", {"content": SECRET_TEXT, "path": "vault.md"})
        event = _latest(rest)[0]
        assert (event.action, event.outcome, event.status) == ("mcp:add_item_text", "ok", 200)
    read_key = admin.client.post("/api-keys", json={"scopes": ["kb:read"]}).json()["key"]
    async with http_client(rest.url, read_key) as client:
        before = _count(rest)
        assert not await _call(client, "delete_document", {"id": str(uuid.uuid4())})
        assert _count(rest) - before == 1
        assert (_latest(rest)[0].outcome, _latest(rest)[0].status) == ("refused", 403)


def test_refusals_sign_ins_and_who_reads_the_trail(rest):
    admin, viewer, outsider = rest.admin(), rest.new_user(), rest.new_user()
    library = admin.client.post("/libraries", json={"name": "Audited"}).json()
    added = admin.client.put(f"/libraries/{library['id']}/members",
                             json={"username": viewer.username, "role": "viewer"})  # fmt: skip
    assert added.status_code == 200
    admin.client.headers["X-Bunko-Library"] = library["id"]
    viewer.client.headers["X-Bunko-Library"] = library["id"]
    outsider.client.headers["X-Bunko-Library"] = library["id"]

    uploaded = admin.client.post("/upload", files={"file": ("v.txt", SECRET_TEXT.encode())})
    assert uploaded.status_code == 201
    wait_until_done(admin.client, uploaded.json()["id"])
    upload = _latest(rest)[0]
    assert (upload.action, upload.outcome, upload.library_id) == (
        "POST /upload", "ok", library["id"])  # fmt: skip

    before = _count(rest)
    assert_error(viewer.client.delete(f"/knowledge-bases/{uploaded.json()['id']}"), 403)
    assert _count(rest) - before == 1
    refused = _latest(rest)[0]
    assert (refused.outcome, refused.status, refused.user_id, refused.library_id) == (
        "refused", 403, viewer.id, library["id"])  # fmt: skip
    assert (refused.object_kind, refused.object_id) == ("file", uploaded.json()["id"])

    before = _count(rest)
    assert_error(outsider.client.get("/knowledge-bases"), 404)  # a read, but refused
    assert _count(rest) - before == 1
    probe = _latest(rest)[0]
    assert (probe.outcome, probe.user_id, probe.library_id) == ("refused", outsider.id,
                                                                library["id"])  # fmt: skip

    wrong = "wrong-" + "pw" * 8
    before = _count(rest)
    with rest.client() as anonymous:
        bad = anonymous.post("/auth/login", json={"username": viewer.username, "password": wrong})
        assert bad.status_code == 401
        assert_error(anonymous.delete("/knowledge-bases/clear"), 401)
    assert _count(rest) - before == 2
    no_token, failed = _latest(rest, 2)
    assert (failed.action, failed.outcome, failed.status, failed.user_id) == (
        "sign_in", "failed", 401, viewer.id)  # fmt: skip
    assert (no_token.outcome, no_token.status, no_token.user_id) == ("refused", 401, None)
    signed_in = rest.login(viewer.username, viewer.password)
    assert (_latest(rest)[0].action, _latest(rest)[0].outcome) == ("sign_in", "ok")

    # who reads: the owner their library's trail, the viewer nothing, an admin everything
    assert_error(viewer.client.get("/audit"), 403)
    signed_in.client.headers["X-Bunko-Library"] = library["id"]
    assert_error(signed_in.client.get("/audit"), 403)
    trail = admin.client.get("/audit", params={"limit": 500, "library": library["id"]})
    assert trail.status_code == 200
    assert {e["libraryId"] for e in trail.json()} == {library["id"]}
    assert int(trail.headers["X-Total-Count"]) == len(trail.json())
    by_viewer = admin.client.get("/audit", params={"user": viewer.id, "library": library["id"]})
    by_viewer = by_viewer.json()
    # her refused delete, then her two refused reads of the trail (sign-ins: her own library)
    assert [(e["action"], e["outcome"]) for e in by_viewer] == [
        ("GET /audit", "refused"), ("GET /audit", "refused"),
        ("DELETE /knowledge-bases/{file_id}", "refused"),
    ]  # fmt: skip
    page = admin.client.get("/audit", params={"limit": 1, "offset": 1, "library": library["id"]})
    page = page.json()
    assert page == trail.json()[1:2]
    del admin.client.headers["X-Bunko-Library"]
    everything = admin.client.get("/audit", params={"action": "sign_in", "limit": 1000}).json()
    assert {e["outcome"] for e in everything} == {"ok", "failed"}
    assert all(e["action"] == "sign_in" for e in everything)
    del viewer.client.headers["X-Bunko-Library"]
    mine = viewer.client.get("/audit", params={"library": library["id"]})  # her own library's
    own = rest.services.identity.authenticate(viewer.token).workspace_id
    assert mine.status_code == 200
    assert {e["libraryId"] for e in mine.json()} == {own}  # her sign-ins; `library` is admins'
    assert [e["action"] for e in mine.json()] == ["sign_in"] * 3  # at sign-up, failed, again

    # nothing typed is kept: not the wrong password, not the document's text
    rows = rest.services.audit.store.events(AuditQuery(limit=1000)).events
    kept = repr(rows)
    assert wrong not in kept and SECRET_TEXT not in kept and ADMIN[1] not in kept


@pytest.mark.slow  # real `bunko audit` processes
def test_bunko_audit_prints_the_trail_on_the_machine(rest):
    admin = rest.admin()
    library = admin.client.post("/libraries", json={"name": "Printed"}).json()
    admin.client.headers["X-Bunko-Library"] = library["id"]
    assert admin.client.post("/upload", files={"file": ("p.txt", b"printed")}).status_code == 201
    data_dir = rest.services.settings.data_dir
    printed = run(["audit", "--library", "Printed", "--json"], data_dir)
    events = [json.loads(line) for line in printed.stdout.splitlines()]
    assert [(e["action"], e["outcome"], e["library_id"]) for e in events] == [
        ("POST /upload", "ok", library["id"])]  # fmt: skip
    assert events[0]["user_id"] == admin.id and events[0]["client"] == "127.0.0.1"
    everything = run(["audit", "--since", "1d", "--limit", "1000"], data_dir)
    total = rest.services.audit.store.events(AuditQuery(limit=1)).total
    assert f"{min(total, 1000)} of {total} events" in everything.stderr
    assert "POST /libraries" in everything.stdout and "sign_in" in everything.stdout
    refused = run(["audit", "--since", "yesterday"], data_dir, check=False)
    assert refused.returncode == 2 and "--since" in refused.stderr
