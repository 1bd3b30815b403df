"""A sealed corpus is reproducible: after its documents are edited and deleted and others
are ingested, searching it gives the same hits with the same text and citations, and an
old revision still reads as it was sealed. Keyword-only and with the multilingual model
(vectors pinned at seal time)."""

from __future__ import annotations

import pytest

from tests.e2e.mcp_harness import deployed, http_client, ok
from tests.e2e.research_contract import validate_snapshot

pytestmark = pytest.mark.anyio

SCOPES = ("kb:read", "kb:write", "agent:research")
DOCS = {
    "bees.md": "Honey bees live in hives. A colony stores honey for the winter.",
    "wasps.md": "Wasps build paper nests and hunt other insects; they make no honey.",
    "ants.md": "Ants farm aphids for honeydew and carry food back to the nest.",
    "jp/mitsubachi.md": "ミツバチは巣箱で暮らし、冬に備えて蜂蜜を蓄えます。",
}
QUERIES = ["honey for the winter", "insects that hunt", "nest", "蜂蜜", "aphids honeydew"]


async def _search_all(client, corpus: dict) -> dict[str, dict]:
    return {
        q: ok(await client.call_tool("research_corpora_search", {**corpus, "query": q,
                                                                 "limit": 10, "min_score": 0.0}))
        for q in QUERIES
    }  # fmt: skip


@pytest.mark.parametrize("embedder", ["none", "use"])
async def test_search_and_citations_survive_edits_deletes_and_new_documents(tmp_path, embedder):
    with deployed(tmp_path / "data", embedder=embedder) as kb:
        key = kb.key(*SCOPES)
        ws = kb.workspace_of(key)
        async with http_client(kb.url, key) as client:
            added = {}
            for path, text in DOCS.items():
                added[path] = ok(
                    await client.call_tool("add_item_text", {"path": path, "content": text})
                )
            project = ok(
                await client.call_tool(
                    "research_projects_create", {"workspace_id": ws, "name": "Insects"}
                )
            )["project"]
            common = {"workspace_id": ws, "project_id": project["id"]}
            for path in ("bees.md", "wasps.md", "jp/mitsubachi.md"):
                ok(
                    await client.call_tool(
                        "research_evidence_add",
                        {**common, "document_id": added[path]["document_id"], "revision": 1},
                    )
                )
            ok(
                await client.call_tool(
                    "research_evidence_add",
                    {  # one chunk of ants.md
                        **common,
                        "document_id": added["ants.md"]["document_id"],
                        "revision": 1,
                        "chunk_id": added["ants.md"]["item_ids"][0],
                        "note": "aphid farming",
                    },
                )
            )
            first = ok(await client.call_tool("research_corpora_seal", common))
            corpus = {"workspace_id": ws, "id": first["snapshot"]["id"]}
            before = await _search_all(client, corpus)
            assert all(result["hits"] for result in before.values())
            assert (
                before["蜂蜜"]["hits"][0]["document_id"] == added["jp/mitsubachi.md"]["document_id"]
            )
            assert all(b["vector_search_used"] is (embedder == "use") for b in before.values())
            cited = {h["evidence_id"] for r in before.values() for h in r["hits"]}
            assert cited <= {e["evidence_id"] for e in first["snapshot"]["evidence"]}

            # The knowledge base moves on: edits, deletes, new documents on the same topics.
            ok(
                await client.call_tool(
                    "add_item_text",
                    {"path": "bees.md", "content": "Bees were moved to another page."},
                )
            )
            ok(
                await client.call_tool(
                    "update_item",
                    {"id": added["ants.md"]["item_ids"][0], "content": "Ants: text replaced."},
                )
            )
            ok(await client.call_tool("delete_document", {"id": added["wasps.md"]["document_id"]}))
            ok(
                await client.call_tool(
                    "delete_document", {"id": added["jp/mitsubachi.md"]["document_id"]}
                )
            )
            for i in range(3):
                ok(
                    await client.call_tool(
                        "add_item_text",
                        {
                            "path": f"new/{i}.md",
                            "content": f"Honey for the winter, insects that hunt, a nest, 蜂蜜 {i}.",
                        },
                    )
                )
            after = await _search_all(client, corpus)
            assert after == before  # same hits, same text, same citations, same scores
            # The live knowledge base did change: normal search finds the new text.
            live = ok(await client.call_tool("search_text", {"content": "honey winter"}))
            assert any(i["path"].startswith("new/") for i in live["items"])

            # Reseal: the project changed (evidence removed), so revision 2; the wasps text
            # and the mitsubachi document are still held by revision 1's passages.
            evidence = first["snapshot"]["evidence"]
            ok(
                await client.call_tool(
                    "research_evidence_remove",
                    {**common, "evidence_id": evidence[0]["evidence_id"]},
                )
            )
            second = ok(await client.call_tool("research_corpora_seal", common))
            assert second["revision"] == 2 and second["snapshot"]["coverage"] == "supplied_set"
            assert second["snapshot"]["evidence"] == evidence[1:]
            old = ok(await client.call_tool("research_corpora_get", {**corpus, "revision": 1}))
            validate_snapshot(old)
            assert old == {"snapshot": first["snapshot"]}
            assert await _search_all(client, {**corpus, "revision": 1}) == before
            latest = await _search_all(client, corpus)
            latest_ids = {h["evidence_id"] for r in latest.values() for h in r["hits"]}
            assert evidence[0]["evidence_id"] not in latest_ids
            wasps = latest["insects that hunt"]["hits"][0]
            assert wasps["content"] == DOCS["wasps.md"] and wasps["revision"] == 1
