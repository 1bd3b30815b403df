"""Index entries for the OpenSearch index tests: two workspaces and a small 4-d vector."""

from __future__ import annotations

from bunko.ports import IndexEntry

WS, OTHER = "ws-1", "ws-2"


def entry(i: int, text: str, *, doc: str = "d1", ws: str = WS, category: str | None = None):
    return IndexEntry(
        chunk_id=f"c{i}",
        document_id=doc,
        workspace_id=ws,
        revision=1,
        text=text,
        category=category,
        vector=[1.0, 0.0, 0.0, float(i)],
    )
