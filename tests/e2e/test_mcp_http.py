"""Every tool over streamable HTTP with the official MCP client, against a real server."""

from __future__ import annotations

import pytest
from mcp import MCPError

from tests.e2e.mcp_harness import deployed, http_client, ok, payload
from tests.e2e.research_contract import RESEARCH_CORE_TOOLS, RESEARCH_HINTS, RESEARCH_TOOLS

pytestmark = pytest.mark.anyio

HTTP_TOOLS = {
    "search_text", "add_item_text", "update_item", "delete_item", "get_item_by_id",
    "list_documents", "list_categories", "get_document_count", "get_document",
    "delete_document", "lsa_retrain", "ask", "list_metadata_keys", "set_document_metadata",
    "list_sources", "sync_source", "rate_answer", "list_activity", "list_marked_answers",
    "list_missing_questions", "export_library", *RESEARCH_TOOLS,
}  # fmt: skip
# (readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
HINTS = {
    "search_text": (True, False, True, False),
    "get_item_by_id": (True, False, True, False),
    "list_documents": (True, False, True, False),
    "list_categories": (True, False, True, False),
    "get_document_count": (True, False, True, False),
    "get_document": (True, False, True, False),
    "list_metadata_keys": (True, False, True, False),
    "set_document_metadata": (False, True, True, False),
    "add_item_text": (False, True, True, False),
    "update_item": (False, True, True, False),
    "delete_item": (False, True, True, False),
    "delete_document": (False, True, True, False),
    "lsa_retrain": (False, False, True, False),
    "ask": (True, False, False, True),
    "rate_answer": (False, False, True, False),
    "list_sources": (True, False, True, False),
    "sync_source": (False, True, True, True),
    "list_activity": (True, False, True, False),
    "list_marked_answers": (True, False, True, False),
    "list_missing_questions": (True, False, True, False),
    "export_library": (False, False, False, False),
    **RESEARCH_HINTS,
}
SEARCH_ITEM_KEYS = {"id", "document_id", "path", "mime", "category", "content", "similarity"}


CORE_TOOLS = {
    "search_text", "add_item_text", "get_item_by_id", "list_documents", "list_categories",
    "get_document", "ask", "rate_answer", *RESEARCH_CORE_TOOLS,
}  # fmt: skip


@pytest.fixture(scope="module")
def kb_schemas(tmp_path_factory):
    """Output schemas advertised (BUNKO_MCP_OUTPUT_SCHEMAS=1): the client validates results."""
    data = tmp_path_factory.mktemp("mcp-schemas") / "data"
    with deployed(data, mcp_output_schemas=True) as deployment:
        yield deployment


@pytest.fixture(params=["plain", "schemas"])
def either(request, kb, kb_schemas):
    return kb if request.param == "plain" else kb_schemas


async def test_tools_list_is_telosdb_set_with_strict_schemas_and_honest_hints(kb):
    async with http_client(kb.url, kb.key("kb:read")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == HTTP_TOOLS  # add_file is stdio-only
    for name, tool in tools.items():
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False, name
        assert tool.description and tool.title, name
        assert tool.output_schema is None  # advertised only with BUNKO_MCP_OUTPUT_SCHEMAS=1
        a = tool.annotations
        hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
        assert hints == HINTS[name], name
    search = tools["search_text"].input_schema["properties"]
    assert search["limit"]["default"] == 5 and search["min_score"]["default"] == 0.3
    assert search["group_by_document"]["default"] is True
    assert tools["search_text"].input_schema["required"] == ["content"]
    paging = tools["list_documents"].input_schema["properties"]
    assert (paging["limit"]["default"], paging["limit"]["minimum"], paging["limit"]["maximum"]) == (
        20, 1, 100,
    )  # fmt: skip
    assert (paging["page"]["default"], paging["page"]["minimum"]) == (1, 1)
    assert tools["get_item_by_id"].input_schema["properties"]["id"]["format"] == "uuid"
    assert set(tools["add_item_text"].input_schema["required"]) == {"content", "path"}


async def test_every_tool_round_trip(either):
    text = "The lighthouse keeper logs every passing ship. " * 40
    async with http_client(either.url, either.key("kb:read", "kb:write")) as client:
        added = ok(
            await client.call_tool(
                "add_item_text", {"content": text, "path": "logs/keeper.md", "category": "logs"}
            )
        )
        assert added["status"] == "completed" and added["mime"] == "text/markdown"
        assert added["chunk_count"] == len(added["item_ids"]) > 1
        doc_id, first = added["document_id"], added["item_ids"][0]

        found = ok(await client.call_tool("search_text", {"content": "lighthouse keeper"}))
        assert found["items"][0]["document_id"] == doc_id
        assert set(found["items"][0]) >= SEARCH_ITEM_KEYS
        assert found["items"][0]["category"] == "logs"
        for category, hits in (("logs", True), ("other", False), ("", True)):
            query = {"content": "lighthouse keeper", "category": category}
            assert bool(ok(await client.call_tool("search_text", query))["items"]) is hits

        item = ok(await client.call_tool("get_item_by_id", {"id": first}))
        assert (item["id"], item["document_id"], item["path"]) == (first, doc_id, "logs/keeper.md")

        document = ok(await client.call_tool("get_document", {"id": doc_id}))
        assert document["content"] == text.strip() or document["content"] == text
        assert [c["id"] for c in document["chunks"]] == added["item_ids"]

        updated = ok(
            await client.call_tool("update_item", {"id": first, "content": "Zeppelins at dawn."})
        )
        assert updated["id"] == first and updated["content"] == "Zeppelins at dawn."
        hit = ok(await client.call_tool("search_text", {"content": "zeppelins", "min_score": 0}))
        assert hit["items"][0]["id"] == first

        assert ok(await client.call_tool("delete_item", {"id": first})) == {
            "deleted": True, "id": first, "document_id": doc_id,
        }  # fmt: skip
        gone = await client.call_tool("get_item_by_id", {"id": first})
        assert gone.is_error and "not found" in gone.content[0].text

        assert ok(await client.call_tool("list_categories", {})) == {"categories": ["logs"]}
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 1}
        listed = ok(await client.call_tool("list_documents", {}))
        assert [d["id"] for d in listed["items"]] == [doc_id]
        assert listed["items"][0]["chunk_count"] == added["chunk_count"] - 1

        deleted = ok(await client.call_tool("delete_document", {"id": doc_id}))
        assert deleted["deleted"] is True and deleted["path"] == "logs/keeper.md"
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 0}
        after = ok(await client.call_tool("search_text", {"content": "lighthouse", "min_score": 0}))
        assert after["items"] == []
        missing = await client.call_tool("get_document", {"id": doc_id})
        assert missing.is_error and "not found" in missing.content[0].text


async def test_search_text_keeps_one_shape_for_match_no_match_and_empty_query(kb):
    async with http_client(kb.url, kb.key("kb:read", "kb:write")) as client:
        ok(await client.call_tool("add_item_text", {"content": "Tea is brewed.", "path": "t.txt"}))
        for query, expect_hits in (
            ("tea brewed", True),
            ("quasar", False),
            ("", False),
            ("  ", False),
        ):
            result = await client.call_tool("search_text", {"content": query})
            assert not result.is_error
            data = payload(result)
            assert set(data) == {"items", "vector_search_used"}
            assert isinstance(data["items"], list) and bool(data["items"]) is expect_hits
            assert data["vector_search_used"] is False  # keyword-only deployment
            assert data == result.structured_content
            assert all(item["engines"] == ["keyword"] for item in data["items"])


async def test_search_text_defaults_come_from_the_workspace_settings(kb):
    key = kb.key("kb:read", "kb:write")
    workspace = kb.workspace_of(key)
    async with http_client(kb.url, key) as client:
        for i in range(4):
            text = f"Kettle number {i} boils water."
            ok(await client.call_tool("add_item_text", {"content": text, "path": f"k{i}.txt"}))
        assert (
            len(payload(await client.call_tool("search_text", {"content": "kettle"}))["items"]) == 4
        )
        kb.services.accounts.workspace_settings.update(
            workspace, {"limit": 2, "min_score": 0.0}, may_watch_folders=False
        )
        saved = payload(await client.call_tool("search_text", {"content": "kettle"}))
        assert len(saved["items"]) == 2  # /settings' limit when the agent leaves it out
        given = payload(await client.call_tool("search_text", {"content": "kettle", "limit": 3}))
        assert len(given["items"]) == 3  # an explicit argument always wins


async def test_paging_edge_cases(kb):
    async with http_client(kb.url, kb.key("kb:read", "kb:write")) as client:
        empty = ok(await client.call_tool("list_documents", {}))
        assert empty == {"items": [], "total_count": 0, "total_pages": 0, "page": 1}
        for i in range(5):
            ok(
                await client.call_tool(
                    "add_item_text", {"content": f"note {i}", "path": f"n{i}.txt"}
                )
            )
        sizes = []
        for page in (1, 2, 3, 4, 99):
            data = ok(await client.call_tool("list_documents", {"limit": 2, "page": page}))
            assert (data["total_count"], data["total_pages"], data["page"]) == (5, 3, page)
            sizes.append(len(data["items"]))
        assert sizes == [2, 2, 1, 0, 0]
        everything = ok(await client.call_tool("list_documents", {"limit": 100}))
        assert len(everything["items"]) == 5 and everything["total_pages"] == 1


async def test_add_item_text_guesses_mime_and_is_idempotent(kb):
    async with http_client(kb.url, kb.key("kb:read", "kb:write")) as client:
        md = ok(await client.call_tool("add_item_text", {"content": "# Title", "path": "a.md"}))
        js = ok(
            await client.call_tool("add_item_text", {"content": '{"k": "v"}', "path": "b.json"})
        )
        pdf = ok(await client.call_tool("add_item_text", {"content": "plain", "path": "c.pdf"}))
        assert (md["mime"], js["mime"], pdf["mime"]) == (
            "text/markdown", "application/json", "text/plain",
        )  # fmt: skip
        again = ok(await client.call_tool("add_item_text", {"content": "# Title", "path": "a.md"}))
        assert (again["document_id"], again["revision"]) == (md["document_id"], 1)
        changed = ok(await client.call_tool("add_item_text", {"content": "# New", "path": "a.md"}))
        assert (changed["document_id"], changed["revision"]) == (md["document_id"], 2)
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 3}


async def test_lsa_retrain_rebuilds_the_index(kb):
    async with http_client(kb.url, kb.key("admin")) as client:
        ok(
            await client.call_tool(
                "add_item_text", {"content": "Kettles whistle.", "path": "k.txt"}
            )
        )
        rebuilt = ok(await client.call_tool("lsa_retrain", {}))
        assert rebuilt["indexed_chunks"] >= 1 and rebuilt["retrained"] is False
        found = ok(await client.call_tool("search_text", {"content": "kettles"}))
        assert found["items"] and found["items"][0]["path"] == "k.txt"


async def test_a_handshake_era_client_works_too(kb):
    async with http_client(kb.url, kb.key("kb:read"), mode="legacy") as client:
        assert client.protocol_version.startswith("20")
        data = ok(await client.call_tool("get_document_count", {}))
        assert data == {"count": 0}


async def test_output_schemas_are_advertised_on_request(kb_schemas):
    async with http_client(kb_schemas.url, kb_schemas.key("kb:read")) as client:
        tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == HTTP_TOOLS
    for tool in tools:
        schema = tool.output_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
        assert "$defs" not in schema and "$ref" not in str(schema), tool.name
    search = next(t for t in tools if t.name == "search_text").output_schema
    assert search["properties"]["items"]["type"] == "array"
    assert set(search["required"]) == {"items", "vector_search_used"}


async def test_core_profile_lists_fewer_tools_but_permits_the_same(tmp_path):
    with deployed(tmp_path / "data", mcp_profile="core") as core:
        async with http_client(core.url, core.key("kb:read", "kb:write")) as client:
            assert {t.name for t in (await client.list_tools()).tools} == CORE_TOOLS
            added = ok(await client.call_tool("add_item_text", {"content": "Hi.", "path": "h.txt"}))
            # Hidden is not forbidden: the key's scopes decide.
            assert ok(await client.call_tool("get_document_count", {})) == {"count": 1}
            ok(await client.call_tool("delete_document", {"id": added["document_id"]}))
        async with http_client(core.url, core.key("kb:read")) as client:
            with pytest.raises(MCPError, match="needs the admin scope"):
                await client.call_tool("lsa_retrain", {})
