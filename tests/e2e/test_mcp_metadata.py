"""Metadata through the MCP door with the official client: an agent writes documents with
metadata, reads the keys, filters search_text, list_documents and ask, edits a document's
metadata, and a bad filter or bad metadata is a tool error naming it; another workspace's
document cannot be edited."""

from __future__ import annotations

import pytest

from tests.e2e.mcp_harness import http_client, ok, payload

pytestmark = pytest.mark.anyio

DOCS = {
    "notes/lease.md": ("The lease for the harbour berth renews in spring.", {"team": "legal"}),
    "notes/berths.md": ("Each harbour berth has a fee and a lease term.", {"team": "ops"}),
    "notes/old.md": ("An old note on the harbour berth and its lease.", None),
}


async def test_an_agent_writes_filters_and_edits_metadata(kb):
    key = kb.key("kb:read", "kb:write")
    async with http_client(kb.url, key) as client:
        ids = {}
        for path, (text, metadata) in DOCS.items():
            args = {"content": text, "path": path}
            if metadata is not None:
                args["metadata"] = {**metadata, "year": 2024, "tags": ["harbour"]}
            ids[path] = ok(await client.call_tool("add_item_text", args))["document_id"]

        keys = ok(await client.call_tool("list_metadata_keys", {}))["keys"]
        assert [k["key"] for k in keys] == ["tags", "team", "year"]
        assert keys[1]["values"] == ["legal", "ops"]

        legal = {"equals": {"key": "team", "value": "legal"}}
        found = ok(
            await client.call_tool("search_text", {"content": "harbour lease", "filter": legal})
        )
        assert [i["path"] for i in found["items"]] == ["notes/lease.md"]
        assert found["items"][0]["metadata"] == {"team": "legal", "year": 2024, "tags": ["harbour"]}
        listed = ok(
            await client.call_tool("list_documents", {"filter": {"exists": {"key": "team"}}})
        )
        assert sorted(d["path"] for d in listed["items"]) == ["notes/berths.md", "notes/lease.md"]
        assert listed["total_count"] == 2

        answer = ok(
            await client.call_tool(
                "ask", {"question": "When does the lease renew?", "filter": legal}
            )
        )
        assert {s["documentId"] for s in answer["sources"]} == {ids["notes/lease.md"]}

        edited = ok(
            await client.call_tool(
                "set_document_metadata", {"id": ids["notes/old.md"], "metadata": {"team": "legal"}}
            )
        )
        assert edited["metadata"] == {"team": "legal"}
        found = ok(
            await client.call_tool("search_text", {"content": "harbour lease", "filter": legal})
        )
        assert sorted(i["path"] for i in found["items"]) == ["notes/lease.md", "notes/old.md"]

        # the same text again without metadata keeps it; with metadata, replaces it
        again = {"content": DOCS["notes/old.md"][0], "path": "notes/old.md"}
        ok(await client.call_tool("add_item_text", again))
        doc = ok(await client.call_tool("get_document", {"id": ids["notes/old.md"]}))
        assert doc["metadata"] == {"team": "legal"}
        ok(await client.call_tool("add_item_text", {**again, "metadata": {"team": "ops"}}))
        found = ok(
            await client.call_tool("search_text", {"content": "harbour lease", "filter": legal})
        )
        assert [i["path"] for i in found["items"]] == ["notes/lease.md"]

        for bad, named in (
            ({"content": "x", "filter": {"near": {"key": "a"}}}, "unknown operator"),
            ({"content": "x", "filter": {"range": {"key": "year"}}}, "at least one of"),
        ):
            result = await client.call_tool("search_text", bad)
            assert result.is_error and named in result.content[0].text
        result = await client.call_tool(
            "add_item_text", {"content": "x", "path": "bad.md", "metadata": {"category": "x"}}
        )
        assert result.is_error and "metadata.category" in result.content[0].text
        count = payload(await client.call_tool("get_document_count", {}))["count"]
        assert count == 3  # nothing was stored by the refused write

    other = kb.key("kb:read", "kb:write")
    async with http_client(kb.url, other) as stranger:
        result = await stranger.call_tool(
            "set_document_metadata", {"id": ids["notes/lease.md"], "metadata": {"team": "x"}}
        )
        assert result.is_error and "not found" in result.content[0].text
        found = ok(await stranger.call_tool("search_text", {"content": "harbour", "filter": legal}))
        assert found["items"] == []
