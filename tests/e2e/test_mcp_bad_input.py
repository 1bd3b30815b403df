"""Bad input gets a tool error an agent can act on, and a failed call changes nothing."""

from __future__ import annotations

import pytest

from bunko.mcp.inputs import MAX_CONTENT_CHARS
from bunko.services.ingest.chunk_items import MAX_ITEM_CHARS
from tests.e2e.mcp_harness import http_client, ok, payload

pytestmark = pytest.mark.anyio

UNKNOWN_ID = "6f1c1a52-7d1e-4b8e-9a43-0b0e5b1f2c11"
TEXT = "Owls hunt at night over the meadow."

# (tool, arguments, words the error message must contain)
SCHEMA_VIOLATIONS = [
    ("search_text", {}, ["content", "Field required"]),
    ("search_text", {"content": "owls", "limit": "5"}, ["limit", "integer"]),
    ("search_text", {"content": "owls", "limit": 0}, ["limit", "greater than or equal to 1"]),
    ("search_text", {"content": "owls", "min_score": 1.5}, ["min_score", "less than or equal"]),
    ("search_text", {"content": "owls", "top_k": 3}, ["top_k", "Extra inputs"]),
    ("search_text", {"content": "x" * 4001}, ["content", "at most 4000"]),
    ("add_item_text", {"content": TEXT}, ["path", "Field required"]),
    ("add_item_text", {"content": "", "path": "a.txt"}, ["content", "at least 1"]),
    ("add_item_text", {"content": TEXT, "path": "a.txt", "mime": "not a mime"}, ["mime"]),
    ("update_item", {"id": "42", "content": "x"}, ["id", "UUID"]),
    ("get_item_by_id", {"id": 42}, ["id"]),
    ("get_document", {}, ["id", "Field required"]),
    ("list_documents", {"limit": 101}, ["limit", "less than or equal to 100"]),
    ("list_documents", {"page": 0}, ["page", "greater than or equal to 1"]),
    ("list_documents", {"page": 1.5}, ["page", "integer"]),
    ("list_categories", {"category": "x"}, ["category", "Extra inputs"]),
    ("lsa_retrain", {"force": True}, ["force", "Extra inputs"]),
]
REFUSED_CALLS = [
    ("get_item_by_id", {"id": UNKNOWN_ID}, ["item", "not found"]),
    ("update_item", {"id": UNKNOWN_ID, "content": "x"}, ["not found"]),
    ("delete_item", {"id": UNKNOWN_ID}, ["not found"]),
    ("get_document", {"id": UNKNOWN_ID}, ["document", "not found"]),
    ("delete_document", {"id": UNKNOWN_ID}, ["not found"]),
    ("add_item_text", {"content": TEXT, "path": "../escape.txt"}, ["invalid path"]),
    # only a control character, at an existing path: refused, not a failed new revision
    ("add_item_text", {"content": "\x15", "path": "owls.txt"}, ["no text"]),
    ("add_item_text", {"content": "   ", "path": "blank.txt"}, ["content"]),
    ("add_item_text", {"content": TEXT, "path": "a.bin", "mime": "application/pdf"}, ["mime"]),
    ("add_item_text", {"content": "x" * (MAX_CONTENT_CHARS + 1), "path": "big.txt"}, ["content"]),
    ("add_file", {"file": "/etc/hostname"}, ["stdio"]),
    ("no_such_tool", {}, ["unknown tool"]),
]


@pytest.fixture(scope="module")
def writer(kb):
    return kb.key("kb:read", "kb:write", "admin")


async def snapshot(client) -> list:
    listed = ok(await client.call_tool("list_documents", {"limit": 100}))
    documents = [
        ok(await client.call_tool("get_document", {"id": d["id"]})) for d in listed["items"]
    ]
    return sorted((d["path"], d["revision"], d["content"], str(d["chunks"])) for d in documents)


async def test_schema_violations_are_tool_errors_naming_the_field(kb, writer):
    async with http_client(kb.url, writer) as client:
        ok(await client.call_tool("add_item_text", {"content": TEXT, "path": "owls.txt"}))
        before = await snapshot(client)
        for name, args, words in SCHEMA_VIOLATIONS:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, args)
            message = result.content[0].text
            assert f"invalid arguments for {name}" in message, message
            for word in words:
                assert word in message, (word, message)
        assert await snapshot(client) == before


async def test_search_text_errors_still_parse_with_an_items_array(kb, writer):
    async with http_client(kb.url, writer) as client:
        result = await client.call_tool("search_text", {"content": "owls", "limit": -1})
        assert result.is_error
        data = payload(result)
        assert data["items"] == [] and "limit" in data["error"]


async def test_unknown_ids_and_refused_writes_change_nothing(kb, writer):
    async with http_client(kb.url, writer) as client:
        ok(await client.call_tool("add_item_text", {"content": TEXT, "path": "owls.txt"}))
        before = await snapshot(client)
        for name, args, words in REFUSED_CALLS:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, args)
            message = result.content[0].text
            for word in words:
                assert word in message, (word, message)
        assert await snapshot(client) == before


async def test_an_oversized_item_edit_is_refused_and_the_item_kept(kb, writer):
    async with http_client(kb.url, writer) as client:
        added = ok(await client.call_tool("add_item_text", {"content": TEXT, "path": "kept.txt"}))
        item_id = added["item_ids"][0]
        too_big = "y" * (MAX_ITEM_CHARS + 1)
        result = await client.call_tool("update_item", {"id": item_id, "content": too_big})
        assert result.is_error and str(MAX_ITEM_CHARS) in result.content[0].text
        assert ok(await client.call_tool("get_item_by_id", {"id": item_id}))["content"] == TEXT
