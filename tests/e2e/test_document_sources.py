"""Each document shows the source that owns it (issue 48), at every door that lists or reads
documents: REST's /knowledge-bases (aurak's shape plus `source`) and MCP's list_documents and
get_document (TelosDB's plus `source`), over live servers and the official MCP client."""

from __future__ import annotations

import pytest

from tests.e2e.mcp_harness import http_client, ok
from tests.e2e.rest_harness import wait_until_done


def test_rest_lists_and_reads_each_files_source(rest):
    user = rest.new_user()
    response = user.client.post(
        "/upload", files={"file": ("hand.txt", b"Typed by hand.", "text/plain")}
    )
    assert response.status_code == 201, response.text
    assert response.json()["source"] == "upload"
    wait_until_done(user.client, response.json()["id"])
    listed = user.client.get("/knowledge-bases").json()
    assert [(f["originalName"], f["source"]) for f in listed] == [("hand.txt", "upload")]
    one = user.client.get(f"/knowledge-bases/{response.json()['id']}").json()
    assert one["source"] == "upload"


@pytest.mark.anyio
async def test_mcp_lists_and_reads_each_documents_source(kb):
    key = kb.key("kb:read", "kb:write")
    async with http_client(kb.url, key) as client:
        added = ok(
            await client.call_tool("add_item_text", {"content": "An agent's note.", "path": "n.md"})
        )
        listed = ok(await client.call_tool("list_documents", {}))
        assert [(d["path"], d["source"]) for d in listed["items"]] == [("n.md", "agent")]
        doc = ok(await client.call_tool("get_document", {"id": added["document_id"]}))
        assert doc["source"] == "agent"
