"""The source tools over MCP with the official client (issue 48, point 3), on the server
`bunko serve` runs: `list_sources` shows a shared library's sources with their last sync to
anyone in it; `sync_source` syncs a real website on a local socket and answers what changed,
for the library's owners only (an editor's key is refused as REST refuses the editor); a
paused source is refused; each sync leaves one audit event."""

from __future__ import annotations

import pytest

from bunko.domain.audit import AuditQuery
from tests.e2e.local_site import LocalSite
from tests.e2e.mcp_harness import http_client, ok, refusal, shared_library

pytestmark = pytest.mark.anyio


# The module's server lets the people on it add sources on loopback (the local site).
REST_SETTINGS = {"allow_private_sources": True}


@pytest.fixture
def handbook_site():
    s = LocalSite()
    s.html("/", "<main><p>Handbook. <a href='/leave.html'>Leave</a></p></main>", title="Home")
    s.html("/leave.html", "<main><p>Leave: twenty days a year.</p></main>", title="Leave")
    yield s
    s.close()


async def test_list_and_sync_sources_as_rest_allows(rest, handbook_site):
    rest = rest
    owner, library, keys = shared_library(rest)
    added = owner.client.post(
        "/sources", json={"kind": "web", "name": "handbook_site", "url": handbook_site.url + "/"}
    )
    assert added.status_code == 201, added.text
    async with http_client(rest.url, keys["viewer"]) as viewer:
        listed = ok(await viewer.call_tool("list_sources", {}))["sources"]
        assert [(s["name"], s["kind"], s["paused"], s["last_sync"]) for s in listed] == [
            ("handbook_site", "web", False, None)
        ]
        assert listed[0]["source"] == added.json()["source"]
        assert "kb:write scope" in await refusal(viewer, "sync_source", {"name": "handbook_site"})
    async with http_client(rest.url, keys["editor"]) as editor:
        said = await refusal(editor, "sync_source", {"name": "handbook_site"})
        assert "only the library's owners" in said
    assert handbook_site.requests() == []  # nothing was fetched for a refused call
    async with http_client(rest.url, keys["owner"]) as agent:
        before = rest.services.audit.store.events(AuditQuery(limit=1)).total
        report = ok(await agent.call_tool("sync_source", {"name": "handbook_site"}))
        assert sorted(report["added"]) == [
            "handbook_site/127.0.0.1/index.md",
            "handbook_site/127.0.0.1/leave.md",
        ]
        assert report["failed"] is None and report["complete"] is True
        event = rest.services.audit.store.events(AuditQuery(limit=1)).events[0]
        assert (event.action, event.outcome, event.library_id) == ("mcp:sync_source", "ok", library)
        assert rest.services.audit.store.events(AuditQuery(limit=1)).total == before + 1
        last = ok(await agent.call_tool("list_sources", {}))["sources"][0]["last_sync"]
        assert (last["added"], last["error_count"]) == (2, 0)
        said = await refusal(agent, "sync_source", {"name": "nothing"})
        assert "no source by that name" in said
        owner.client.patch("/sources/handbook_site", json={"paused": True})
        assert "paused" in await refusal(agent, "sync_source", {"name": "handbook_site"})
