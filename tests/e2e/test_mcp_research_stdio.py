"""The research tools over stdio (`bunko mcp`), driven by the official MCP client: the
advertised schemas are the sosoapi page's and every research_corpora_get result validates
against it; an API key without agent:research is refused and changes nothing."""

from __future__ import annotations

import pytest
from mcp import Client

from bunko.domain import DEFAULT_WORKSPACE_ID
from tests.e2e.mcp_harness import ok
from tests.e2e.mcp_stdio_harness import bunko_mcp, create_key
from tests.e2e.research_contract import SEED_INPUT, SEED_OUTPUT, validate_snapshot

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real `bunko mcp` processes

LOCAL_WORKSPACE = "00000000-0000-4000-8000-000000000001"  # the local user's (auth off)


async def test_stdio_research_corpus_matches_the_contract(tmp_path):
    data = tmp_path / "data"
    async with Client(bunko_mcp(data, BUNKO_MCP_OUTPUT_SCHEMAS="1")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        get = tools["research_corpora_get"]
        assert (get.input_schema, get.output_schema) == (SEED_INPUT, SEED_OUTPUT)
        ws = LOCAL_WORKSPACE
        doc = ok(
            await client.call_tool(
                "add_item_text",
                {"path": "tea.md", "content": "Green tea is steamed; black tea is oxidised."},
            )
        )
        project = ok(
            await client.call_tool("research_projects_create", {"workspace_id": ws, "name": "Tea"})
        )["project"]
        common = {"workspace_id": ws, "project_id": project["id"]}
        ok(
            await client.call_tool(
                "research_evidence_add",
                {**common, "document_id": doc["document_id"], "revision": 1},
            )
        )
        sealed = ok(await client.call_tool("research_corpora_seal", common))
        corpus = {"workspace_id": ws, "id": sealed["snapshot"]["id"]}
        for arguments in (corpus, {**corpus, "revision": 1}):
            got = ok(await client.call_tool("research_corpora_get", arguments))
            validate_snapshot(got)
            assert got == {"snapshot": sealed["snapshot"]}
        hits = ok(
            await client.call_tool("research_corpora_search", {**corpus, "query": "oxidised tea"})
        )
        assert hits["hits"][0]["content"] == "Green tea is steamed; black tea is oxidised."
        zero = await client.call_tool("research_corpora_get", {**corpus, "revision": 0})
        assert zero.is_error and "greater than 0" in zero.content[0].text


async def test_stdio_key_without_research_scope_is_refused(tmp_path):
    data = tmp_path / "data"
    workspace = DEFAULT_WORKSPACE_ID  # the default library: a fresh data folder's is empty
    key = create_key(data, "kb:read,kb:write", "default")
    async with Client(bunko_mcp(data, "--api-key", key)) as client:
        refused = await client.call_tool(
            "research_projects_create", {"workspace_id": workspace, "name": "Not allowed"}
        )
        assert refused.is_error and "agent:research" in refused.content[0].text
    research_key = create_key(data, "agent:research", "default")
    async with Client(bunko_mcp(data, "--api-key", research_key)) as client:
        listed = ok(await client.call_tool("research_projects_list", {"workspace_id": workspace}))
        assert listed == {"projects": []}  # the refused call changed nothing
