"""SqliteChunkStore: the chunks of each document's current revision, in SQLite."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.rows import (
    CHUNK_COLUMNS,
    INSERT_CHUNK,
    chunk_from_row,
    chunk_values,
    rows_by_ids,
)
from bunko.domain import Chunk
from bunko.domain.documents import encode_page_breaks
from bunko.errors import NotFoundError


class SqliteChunkStore:
    """The ChunkStore seam of the embedded metadata store (same database, same locking)."""

    db: SqliteDatabase

    def replace_chunks(self, workspace_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        rows = [chunk_values(c, document_id, workspace_id) for c in chunks]
        with self.db.transaction() as conn:
            exists = conn.execute(
                "SELECT 1 FROM documents WHERE id = ? AND workspace_id = ?",
                (document_id, workspace_id),
            ).fetchone()
            if exists is None:
                raise NotFoundError(f"document {document_id} not found")
            conn.execute(
                "DELETE FROM chunks WHERE document_id = ? AND workspace_id = ?",
                (document_id, workspace_id),
            )
            conn.executemany(INSERT_CHUNK, rows)

    def get_chunks(self, workspace_id: str, document_id: str) -> list[Chunk]:
        rows = self.db.connect().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE workspace_id = ? AND document_id = ? "
            "ORDER BY idx",
            (workspace_id, document_id),
        )
        return [chunk_from_row(r) for r in rows]

    def get_chunk(self, workspace_id: str, chunk_id: str) -> Chunk | None:
        row = (
            self.db.connect()
            .execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE workspace_id = ? AND id = ?",
                (workspace_id, chunk_id),
            )
            .fetchone()
        )
        return chunk_from_row(row) if row else None

    def get_chunks_by_ids(self, workspace_id: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        rows = rows_by_ids(self.db.connect(), "chunks", CHUNK_COLUMNS, workspace_id, chunk_ids)
        return [chunk_from_row(row) for row in rows]

    def save_chunk(self, chunk: Chunk) -> None:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE chunks SET content = ?, revision = ?, idx = ?, start_offset = ?, "
                "end_offset = ?, page = ?, page_breaks = ?, sentence_terms = ? "
                "WHERE id = ? AND workspace_id = ?",
                (
                    chunk.content,
                    chunk.revision,
                    chunk.index,
                    chunk.start,
                    chunk.end,
                    chunk.page,
                    encode_page_breaks(chunk.page_breaks),
                    chunk.sentence_terms,
                    chunk.id,
                    chunk.workspace_id,
                ),
            )
        if cursor.rowcount == 0:
            raise NotFoundError(f"chunk {chunk.id} not found")

    def delete_chunk(self, workspace_id: str, chunk_id: str) -> bool:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM chunks WHERE id = ? AND workspace_id = ?", (chunk_id, workspace_id)
            )
        return cursor.rowcount > 0

    def iter_chunks(self, workspace_id: str | None = None) -> Iterator[Chunk]:
        # Page by rowid so a large knowledge base is never held in memory at once.
        conn = self.db.connect()
        last = -1
        while True:
            sql = f"SELECT rowid, {CHUNK_COLUMNS} FROM chunks WHERE rowid > ?"
            params: list = [last]
            if workspace_id is not None:
                sql += " AND workspace_id = ?"
                params.append(workspace_id)
            rows = conn.execute(sql + " ORDER BY rowid LIMIT 1000", params).fetchall()
            if not rows:
                return
            for row in rows:
                yield chunk_from_row(row)
            last = rows[-1]["rowid"]

    def count_chunks(self, workspace_id: str | None = None) -> int:
        if workspace_id is None:
            return self.db.connect().execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return (
            self.db.connect()
            .execute("SELECT COUNT(*) FROM chunks WHERE workspace_id = ?", (workspace_id,))
            .fetchone()[0]
        )
