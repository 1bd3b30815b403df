"""One page of a workspace's documents, filtered by name and ordered, in SQL: the library
page's listing over thousands of files (services/ingest/knowledge_base.py)."""

from __future__ import annotations

import sqlite3

from bunko.adapters.local.sqlite.metadata_filter import filter_sql
from bunko.adapters.local.sqlite.rows import document_from_row
from bunko.domain.document_query import DocumentPage, DocumentQuery, DocumentSort, fold

# Ties fall back to the name, then the id (domain/document_query.sort_key, kept alike).
_ORDER: dict[DocumentSort, tuple[str, ...]] = {
    "date": ("created_at", "id"),
    "name": ("bunko_fold(name)", "bunko_fold(path)", "id"),
    "size": ("size", "bunko_fold(name)", "id"),
    "type": ("mime", "bunko_fold(name)", "id"),
}


def find_documents(
    conn: sqlite3.Connection, workspace_id: str, query: DocumentQuery, *, limit: int, offset: int
) -> DocumentPage:
    # SQLite's own lower()/NOCASE fold ASCII only; Python's casefold matches the other stores.
    conn.create_function("bunko_fold", 1, _fold, deterministic=True)
    where, params = "workspace_id = ?", [workspace_id]
    if part := query.folded_name:
        where += " AND (instr(bunko_fold(name), ?) > 0 OR instr(bunko_fold(path), ?) > 0)"
        params += [part, part]
    if query.filter is not None:
        sql, terms = filter_sql(query.filter, workspace_id)
        where += f" AND {sql}"
        params += terms
    direction = "DESC" if query.descending else "ASC"
    order = ", ".join(f"{column} {direction}" for column in _ORDER[query.sort])
    rows = conn.execute(
        f"SELECT * FROM documents WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    total = conn.execute(f"SELECT COUNT(*) FROM documents WHERE {where}", params).fetchone()[0]
    return DocumentPage(documents=[document_from_row(r) for r in rows], total=total)


def _fold(text: str | None) -> str:
    return fold(text or "")
