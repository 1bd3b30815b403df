"""MCP's tools come from an explicit list handed to build_server (issue 51, point 2), not from
modules registering themselves on import: a server serves exactly the tools it is given."""

from __future__ import annotations

import pytest
from mcp import Client

from bunko.domain.auth import SCOPE_READ, SCOPE_WRITE
from bunko.mcp import build_server
from bunko.mcp.tool_server import ALL_TOOLS
from bunko.mcp.tools_read import READ_TOOLS
from bunko.mcp.tools_write import WRITE_TOOLS

pytestmark = pytest.mark.anyio


async def test_a_server_serves_exactly_the_tools_it_is_given(kb):
    principal = kb.services.identity.authenticate(kb.key(SCOPE_READ, SCOPE_WRITE))
    server = build_server(
        kb.services, profile="full", transport="stdio", principal=principal, tools=READ_TOOLS
    )
    async with Client(server) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        refused = await client.call_tool("add_item_text", {"content": "x", "path": "x.md"})
        counted = await client.call_tool("get_document_count", {})
    assert listed == [spec.name for spec in READ_TOOLS]
    assert refused.is_error and "unknown tool 'add_item_text'" in refused.content[0].text
    assert not counted.is_error and counted.structured_content == {"count": 0}


async def test_by_default_every_listed_tool_is_served_once(kb):
    principal = kb.services.identity.authenticate(kb.key(SCOPE_READ))
    server = build_server(kb.services, profile="full", transport="stdio", principal=principal)
    async with Client(server) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
    assert listed == [spec.name for spec in ALL_TOOLS]
    assert len(set(listed)) == len(listed)
    assert {s.name for s in WRITE_TOOLS} <= set(listed)  # add_file too: stdio shows it
