"""Migration 0014: documents an older Bunko stored keep the source they were written with (a
row that never named one has the column's default, `api`), and the mirror's query reads a
source's documents through the new index, not the library's whole table."""

from __future__ import annotations

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.store import SqliteMetadataStore
from tests.sqlite_migrations import database_before

MIGRATION = "0014_document_sources.sql"


def test_older_documents_keep_their_source_and_a_source_is_read_by_the_index(tmp_path):
    conn = database_before(tmp_path / "bunko.db", MIGRATION)
    for doc_id, source in (("dropped", ", source"), ("unnamed", "")):  # unnamed: the default
        values = "?, 'ws', ?, ?, 'text/plain', 'completed', 1000, 200, ?, ?" + (
            ", ?" if source else ""
        )
        conn.execute(
            "INSERT INTO documents (id, workspace_id, path, name, mime, status, chunk_size,"
            f" chunk_overlap, created_at, updated_at{source}) VALUES ({values})",
            (doc_id, f"{doc_id}.txt", f"{doc_id}.txt", "2024-01-01T00:00:00+00:00",
             "2024-01-01T00:00:00+00:00", *(["drop"] if source else [])),
        )  # fmt: skip
    conn.commit()
    conn.close()
    db = SqliteDatabase(tmp_path / "bunko.db")
    try:
        store = SqliteMetadataStore(db)
        assert [d.id for d in store.iter_source_documents("ws", "drop")] == ["dropped"]
        assert [d.id for d in store.iter_source_documents("ws", "api")] == ["unnamed"]
        plan = db.connect().execute(
            "EXPLAIN QUERY PLAN SELECT * FROM documents WHERE workspace_id = ? AND source = ?"
            " ORDER BY path",
            ("ws", "drop"),
        )
        assert "documents_by_source" in " ".join(str(tuple(row)) for row in plan)
    finally:
        db.close()
