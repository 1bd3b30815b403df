"""`bunko mcp` over stdio, spawned and driven by the official MCP client."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from mcp import Client

from tests.e2e.mcp_harness import ok
from tests.e2e.mcp_stdio_harness import bunko_mcp, create_key, run_apikey_create, stdio_env
from tests.e2e.research_contract import RESEARCH_CORE_TOOLS, RESEARCH_TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real `bunko mcp` and `bunko apikey` processes

CORE_TOOLS = {
    "search_text", "add_item_text", "get_item_by_id", "list_documents", "list_categories",
    "get_document", "ask", "rate_answer", *RESEARCH_CORE_TOOLS,
}  # fmt: skip
HTML = "<html><body><h1>Beekeeping</h1><p>Bees make honey in the hive all summer.</p></body></html>"


def test_a_key_is_made_for_a_library_by_name_never_for_a_mistyped_id(tmp_path):
    data = tmp_path / "data"
    stray = run_apikey_create(data, "kb:read", "--workspace", str(uuid.uuid4()))
    assert stray.returncode == 2 and "--library" in stray.stderr and stray.stdout == ""
    unknown = run_apikey_create(data, "kb:read", "--library", "no such library")
    assert unknown.returncode == 2 and "no library or user named" in unknown.stderr


async def test_stdio_serves_every_tool_and_adds_local_files(tmp_path):
    data = tmp_path / "data"
    page = tmp_path / "bees.html"
    page.write_text(HTML, encoding="utf-8")
    async with Client(bunko_mcp(data)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "add_file" in names and "ask" in names
        # with the two metadata tools, rate_answer, list_sources, sync_source and the
        # owners' three reads (list_activity, list_marked_answers, list_missing_questions)
        # and export_library
        assert len(names) == 22 + len(RESEARCH_TOOLS)
        added = ok(await client.call_tool("add_file", {"file": str(page), "category": "hobby"}))
        assert added["status"] == "completed" and added["mime"] == "text/html"
        assert added["path"] == page.resolve().as_posix().lstrip("/")  # a logical path
        found = ok(await client.call_tool("search_text", {"content": "honey hive"}))
        assert found["items"][0]["document_id"] == added["document_id"]
        document = ok(await client.call_tool("get_document", {"id": added["document_id"]}))
        assert "Bees make honey" in document["content"] and "<p>" not in document["content"]
        named = ok(await client.call_tool("add_file", {"file": str(page), "path": "hobby/bees"}))
        assert named["path"] == "hobby/bees"
        missing = await client.call_tool("add_file", {"file": str(tmp_path / "nope.pdf")})
        assert missing.is_error and "no readable file" in missing.content[0].text
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 2}


async def test_profile_and_output_schemas_come_from_the_environment(tmp_path):
    params = bunko_mcp(tmp_path / "data", BUNKO_MCP_PROFILE="core", BUNKO_MCP_OUTPUT_SCHEMAS="1")
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == CORE_TOOLS
        for tool in tools:
            assert tool.output_schema["type"] == "object", tool.name
            assert tool.output_schema["additionalProperties"] is False, tool.name
        # The client validates structured results against the advertised schemas.
        ok(await client.call_tool("add_item_text", {"content": "Moths fly.", "path": "m.txt"}))
        ok(await client.call_tool("search_text", {"content": "moths"}))
        ok(await client.call_tool("list_documents", {}))
        # A profile hides tools; it does not take permission away.
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 1}


async def test_an_api_key_scopes_the_stdio_server(tmp_path):
    data = tmp_path / "data"
    key = create_key(data, "kb:read", "default")
    note = tmp_path / "note.txt"
    note.write_text("Read-only agents cannot write.", encoding="utf-8")
    async with Client(bunko_mcp(data, "--api-key", key)) as client:
        refused = await client.call_tool("add_file", {"file": str(note)})
        assert refused.is_error and "kb:write" in refused.content[0].text
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 0}


def test_a_bad_api_key_stops_the_stdio_server(tmp_path):
    data = tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-m", "bunko.cli", "mcp", "--data-dir", str(data)],
        input="", capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, **stdio_env(BUNKO_API_KEY="bk_forged")},
    )  # fmt: skip
    assert done.returncode == 2
    assert "invalid or revoked" in done.stderr
    assert done.stdout == ""  # nothing but protocol ever goes to stdout
