"""The MCP tool `ask` with the official MCP client over streamable HTTP: a cited answer with
structured sources, abstention, the kb:read scope, and a strict input schema."""

from __future__ import annotations

import pytest
from mcp import MCPError

from bunko.services.chat.chat_text import NOTHING_FOUND
from tests.e2e.chat_harness import DOCUMENTS
from tests.e2e.mcp_harness import http_client, ok

# The settings of the module's MCP deployment (the `kb` fixture, tests/conftest.py).
MCP_SETTINGS = {"mcp_output_schemas": True}

pytestmark = pytest.mark.anyio


async def test_ask_answers_with_numbered_structured_sources(kb):
    key = kb.key("kb:read", "kb:write")
    async with http_client(kb.url, key) as client:
        for name, text in DOCUMENTS.items():
            ok(await client.call_tool("add_item_text", {"content": text, "path": name}))
        tools = {t.name: t for t in (await client.list_tools()).tools}
        spec = tools["ask"]
        assert spec.annotations.read_only_hint is True
        assert spec.annotations.open_world_hint is True
        assert spec.annotations.destructive_hint is False
        assert spec.input_schema["additionalProperties"] is False
        assert spec.input_schema["required"] == ["question"]

        result = ok(await client.call_tool("ask", {"question": "When was the lighthouse built?"}))
        assert "1872" in result["answer"] and "[1]" in result["answer"]
        first = result["sources"][0]
        assert first["number"] == 1 and first["fileName"] == "lighthouse.txt"
        assert set(first) == {
            "number", "fileName", "content", "score", "chunkIndex", "documentId",
            "page", "pageEnd", "quote", "quoteStart", "quoteEnd", "quotes",
        }  # fmt: skip

        history = [
            {"role": "user", "content": "Tell me about the Kessock lighthouse."},
            {"role": "assistant", "content": "It was built in 1872 [1]."},
        ]
        followed = ok(
            await client.call_tool(
                "ask", {"question": "And what happened in 2023?", "history": history}
            )
        )
        assert "museum" in followed["answer"]

        nothing = ok(
            await client.call_tool("ask", {"question": "gluon chromodynamics", "language": "ja"})
        )
        answer_id = nothing.pop("answerId")  # the id rate_answer takes (docs/answers.md)
        assert nothing == {"answer": NOTHING_FOUND["ja"], "sources": []} and answer_id


async def test_ask_needs_kb_read_and_valid_arguments(kb):
    async with http_client(kb.url, kb.key("kb:write")) as client:
        with pytest.raises(MCPError, match="ask needs the kb:read scope"):
            await client.call_tool("ask", {"question": "hi"})
    async with http_client(kb.url, kb.key("kb:read")) as client:
        for bad in (
            {},
            {"question": ""},
            {"question": "hi", "language": "fr"},
            {"question": "hi", "extra": 1},
        ):
            result = await client.call_tool("ask", bad)
            assert result.is_error and "invalid arguments for ask" in result.content[0].text
