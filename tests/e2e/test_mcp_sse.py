"""The legacy HTTP+SSE transport TelosDB clients use: GET /sse, POST /messages?session_id=."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.mcp_harness import ok, sse_session

pytestmark = pytest.mark.anyio


async def test_the_official_sse_client_uses_every_kind_of_tool(kb):
    async with sse_session(kb.url, kb.key("kb:read", "kb:write")) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"search_text", "add_item_text", "list_documents", "lsa_retrain"} <= names
        assert "add_file" not in names
        added = ok(
            await client.call_tool(
                "add_item_text", {"content": "Foxes den in the hedgerow.", "path": "fox.txt"}
            )
        )
        found = ok(await client.call_tool("search_text", {"content": "foxes hedgerow"}))
        assert [i["document_id"] for i in found["items"]] == [added["document_id"]]
        listed = ok(await client.call_tool("list_documents", {"limit": 1, "page": 2}))
        assert listed == {"items": [], "total_count": 1, "total_pages": 1, "page": 2}
        refused = await client.call_tool("get_document", {"id": "not-a-uuid"})
        assert refused.is_error and "id" in refused.content[0].text


def _open_session(kb, lines) -> str:
    """Read the `endpoint` event of an open GET /sse stream: the POST path of the session.
    The caller keeps `lines` alive: dropping the iterator would close the stream."""
    for line in lines:
        if line.startswith("event: endpoint"):
            data = next(lines)
            assert data.startswith("data: /messages?session_id=")
            return kb.url + data.removeprefix("data: ")
    raise AssertionError("no endpoint event")


def test_a_session_belongs_to_the_key_that_opened_it_and_scopes_hold(kb):
    owner, other = kb.key("kb:read"), kb.key("kb:read", "kb:write")
    headers = {"Authorization": f"Bearer {owner}"}
    with httpx.stream("GET", kb.url + "/sse", headers=headers, timeout=30) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()
        endpoint = _open_session(kb, lines)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        hijack = httpx.post(endpoint, json=ping, headers={"Authorization": f"Bearer {other}"})
        assert hijack.status_code == 404  # as if the session did not exist
        write = {
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "add_item_text", "arguments": {"content": "x", "path": "x.txt"}},
        }  # fmt: skip
        refused = httpx.post(endpoint, json=write, headers=headers)
        assert refused.status_code == 403
        assert 'scope="kb:write"' in refused.headers["www-authenticate"]
        accepted = httpx.post(endpoint, json=ping, headers=headers)
        assert accepted.status_code == 202
    assert kb.services.metadata.count_documents(kb.workspace_of(owner)) == 0
