"""Search and chat can name a source (issue 48, point 3), on a real server with a real
website synced into the ferry_library beside a hand upload saying the same thing: REST /search,
/chat/stream and /v1/chat/completions, and MCP search_text and ask with the official client,
each given `source` (the source's name, its `connector:<id>`, or a door's own such as
`upload`) answer only from that source's documents; a name that is no source here is 400
before anything is searched (a tool error over MCP)."""

from __future__ import annotations

import json

import pytest
from httpx_sse import connect_sse

from tests.e2e.local_site import LocalSite
from tests.e2e.mcp_harness import http_client, mcp_error_in, ok
from tests.e2e.rest_harness import serve

PAGE = "<main><p>The ferry to the island leaves at nine from pier four.</p></main>"
UPLOAD = b"The ferry to the island leaves at ten from pier two, says the old timetable."


@pytest.fixture(scope="module")
def ferry_library(tmp_path_factory):
    """A ferry_library with a synced website (two pages about the ferry) and a hand upload."""
    site = LocalSite()
    site.html("/", f"{PAGE}<a href='/b.html'>b</a>", title="Ferry")
    site.html("/b.html", "<main><p>The ferry café sells tea on pier four.</p></main>", "Cafe")
    data = tmp_path_factory.mktemp("source-filter") / "data"
    with serve(data, allow_private_sources=True) as rest:
        owner = rest.new_user()
        client = owner.client
        added = client.post("/sources", json={"kind": "web", "name": "port", "url": site.url + "/"})
        assert added.status_code == 201, added.text
        assert len(client.post("/sources/port/sync").json()["added"]) == 2
        up = client.post("/upload", files={"file": ("timetable.txt", UPLOAD, "text/plain")})
        assert up.status_code == 201, up.text
        assert rest.services.ingest.wait_for_queue(timeout=60)
        key = client.post("/api-keys", json={"scopes": ["kb:read"]}).json()["key"]
        yield rest, owner, added.json()["source"], key
    site.close()


def searched(client, **params) -> list[str]:
    found = client.get("/search", params={"q": "ferry pier", "limit": 10, **params})
    assert found.status_code == 200, found.text
    return sorted(i["path"].rsplit("/", 1)[-1] for i in found.json()["items"])


def chat_sources(client, **extra) -> list[str]:
    body = {"message": "When does the ferry leave?", **extra}
    names = []
    with connect_sse(client, "POST", "/chat/stream", json=body) as stream:
        assert stream.response.status_code == 200, stream.response.read()
        for sse in stream.iter_sse():
            if sse.data == "[DONE]":
                break
            event = json.loads(sse.data)
            assert event["type"] != "error", event
            if event["type"] == "sources":
                names = sorted({s["fileName"] for s in event["data"]})
    return names


def test_rest_search_and_chat_name_a_source(ferry_library):
    _, owner, connector, _ = ferry_library
    client = owner.client
    assert searched(client) == ["b.md", "index.md", "timetable.txt"]
    assert searched(client, source="port") == ["b.md", "index.md"]
    assert searched(client, source=connector) == ["b.md", "index.md"]
    assert searched(client, source="upload") == ["timetable.txt"]
    assert searched(client, source="agent") == []
    refused = client.get("/search", params={"q": "ferry", "source": "nowhere"})
    assert refused.status_code == 400 and "no source named 'nowhere'" in refused.text

    assert {"index.md", "timetable.txt"} <= set(chat_sources(client))
    port = chat_sources(client, source="port")
    assert "index.md" in port and set(port) <= {"index.md", "b.md"}
    assert chat_sources(client, source="upload") == ["timetable.txt"]
    assert (
        client.post("/chat/stream", json={"message": "ferry?", "source": "nowhere"}).status_code
        == 400
    )

    v1 = client.post(
        "/v1/chat/completions",
        json={
            "model": "bunko-extractive",
            "messages": [{"role": "user", "content": "When does the ferry leave?"}],
            "source": "upload",
        },
    )
    assert v1.status_code == 200, v1.text
    assert {s["fileName"] for s in v1.json()["sources"]} == {"timetable.txt"}


@pytest.mark.anyio
async def test_mcp_search_and_ask_name_a_source(ferry_library):
    rest, _, connector, key = ferry_library
    async with http_client(rest.url, key) as agent:
        found = ok(
            await agent.call_tool("search_text", {"content": "ferry pier", "source": "port"})
        )
        assert sorted(i["path"].rsplit("/", 1)[-1] for i in found["items"]) == ["b.md", "index.md"]
        found = ok(
            await agent.call_tool("search_text", {"content": "ferry pier", "source": "upload"})
        )
        assert [i["path"] for i in found["items"]] == ["timetable.txt"]
        bad = await agent.call_tool("search_text", {"content": "ferry", "source": "nowhere"})
        assert bad.is_error and "no source named" in bad.structured_content["error"]
        answer = ok(
            await agent.call_tool(
                "ask", {"question": "When does the ferry leave?", "source": connector}
            )
        )
        cited = {s["fileName"] for s in answer["sources"]}
        assert "index.md" in cited and cited <= {"index.md", "b.md"}
        try:
            refused = await agent.call_tool("ask", {"question": "ferry?", "source": "nowhere"})
            said = refused.content[0].text
        except BaseException as exc:
            said = str(mcp_error_in(exc) or exc)
        assert "no source named" in said
