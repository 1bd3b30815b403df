"""SqliteMetadataStore: workspaces, documents, revisions and chunks in SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import astuple
from datetime import datetime

from bunko.adapters.local.sqlite_db import SqliteDatabase
from bunko.adapters.local.sqlite_rows import (
    CHUNK_COLUMNS,
    DOC_COLUMNS,
    IN_BATCH,
    REV_COLUMNS,
    chunk_from_row,
    document_from_row,
    document_values,
    revision_from_row,
)
from bunko.domain import Chunk, Document, Revision, Workspace
from bunko.errors import ConflictError, NotFoundError


class SqliteMetadataStore:
    """The embedded MetadataStore. Thread-safe: a connection per thread, serialised writes."""

    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    # workspaces
    def ensure_workspace(self, workspace: Workspace) -> Workspace:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO workspaces (id, name, created_at) VALUES (?, ?, ?)",
                (workspace.id, workspace.name, workspace.created_at.isoformat()),
            )
        found = self.get_workspace(workspace.id)
        assert found is not None
        return found

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        row = (
            self.db.connect()
            .execute("SELECT * FROM workspaces WHERE id = ?", (workspace_id,))
            .fetchone()
        )
        if row is None:
            return None
        return Workspace(
            id=row["id"], name=row["name"], created_at=datetime.fromisoformat(row["created_at"])
        )

    # documents
    def add_document(self, document: Document) -> None:
        placeholders = ", ".join("?" for _ in DOC_COLUMNS)
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO documents ({', '.join(DOC_COLUMNS)}) VALUES ({placeholders})",
                    document_values(document),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(
                f"a document with path {document.path!r} already exists in this workspace"
            ) from exc

    def save_document(self, document: Document) -> None:
        columns = [c for c in DOC_COLUMNS if c not in ("id", "workspace_id")]
        values = dict(zip(DOC_COLUMNS, document_values(document), strict=True))
        assignments = ", ".join(f"{c} = ?" for c in columns)
        try:
            with self.db.transaction() as conn:
                cursor = conn.execute(
                    f"UPDATE documents SET {assignments} WHERE id = ? AND workspace_id = ?",
                    (*(values[c] for c in columns), document.id, document.workspace_id),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"path {document.path!r} is taken in this workspace") from exc
        if cursor.rowcount == 0:
            raise NotFoundError(f"document {document.id} not found")

    def get_document(self, workspace_id: str, document_id: str) -> Document | None:
        row = (
            self.db.connect()
            .execute(
                "SELECT * FROM documents WHERE id = ? AND workspace_id = ?",
                (document_id, workspace_id),
            )
            .fetchone()
        )
        return document_from_row(row) if row else None

    def get_document_by_path(self, workspace_id: str, path: str) -> Document | None:
        row = (
            self.db.connect()
            .execute(
                "SELECT * FROM documents WHERE workspace_id = ? AND path = ?", (workspace_id, path)
            )
            .fetchone()
        )
        return document_from_row(row) if row else None

    def list_documents(
        self, workspace_id: str, *, limit: int, offset: int = 0, category: str | None = None
    ) -> list[Document]:
        sql = "SELECT * FROM documents WHERE workspace_id = ?"
        params: list = [workspace_id]
        if category is not None:
            sql += " AND category = ?"
            params.append(category)
        sql += " ORDER BY created_at DESC, id LIMIT ? OFFSET ?"
        params += [limit, offset]
        return [document_from_row(r) for r in self.db.connect().execute(sql, params)]

    def count_documents(self, workspace_id: str, *, category: str | None = None) -> int:
        sql = "SELECT COUNT(*) FROM documents WHERE workspace_id = ?"
        params: list = [workspace_id]
        if category is not None:
            sql += " AND category = ?"
            params.append(category)
        return self.db.connect().execute(sql, params).fetchone()[0]

    def list_categories(self, workspace_id: str) -> list[str]:
        rows = self.db.connect().execute(
            "SELECT DISTINCT category FROM documents "
            "WHERE workspace_id = ? AND category IS NOT NULL AND category != '' ORDER BY category",
            (workspace_id,),
        )
        return [r[0] for r in rows]

    def delete_document(self, workspace_id: str, document_id: str) -> bool:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM documents WHERE id = ? AND workspace_id = ?",
                (document_id, workspace_id),
            )
        return cursor.rowcount > 0

    def iter_documents(self, workspace_id: str | None = None) -> Iterator[Document]:
        if workspace_id is None:
            rows = (
                self.db.connect().execute("SELECT * FROM documents ORDER BY created_at").fetchall()
            )
        else:
            rows = (
                self.db.connect()
                .execute(
                    "SELECT * FROM documents WHERE workspace_id = ? ORDER BY created_at",
                    (workspace_id,),
                )
                .fetchall()
            )
        for row in rows:
            yield document_from_row(row)

    # revisions
    def add_revision(self, revision: Revision) -> None:
        values = list(astuple(revision))
        values[REV_COLUMNS.index("created_at")] = revision.created_at.isoformat()
        placeholders = ", ".join("?" for _ in REV_COLUMNS)
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO revisions ({', '.join(REV_COLUMNS)}) "
                f"VALUES ({placeholders})",
                values,
            )

    def get_revision(self, workspace_id: str, document_id: str, revision: int) -> Revision | None:
        row = (
            self.db.connect()
            .execute(
                "SELECT * FROM revisions WHERE workspace_id = ? AND document_id = ? "
                "AND revision = ?",
                (workspace_id, document_id, revision),
            )
            .fetchone()
        )
        return revision_from_row(row) if row else None

    def list_revisions(self, workspace_id: str, document_id: str) -> list[Revision]:
        rows = self.db.connect().execute(
            "SELECT * FROM revisions WHERE workspace_id = ? AND document_id = ? ORDER BY revision",
            (workspace_id, document_id),
        )
        return [revision_from_row(r) for r in rows]

    # chunks
    def replace_chunks(self, workspace_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        rows = [
            (
                c.id,
                document_id,
                workspace_id,
                c.revision,
                c.index,
                c.content,
                c.start,
                c.end,
                c.page,
            )
            for c in chunks
        ]
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
            conn.executemany(
                f"INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
            )

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
        found: dict[str, Chunk] = {}
        conn = self.db.connect()
        ids = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(ids), IN_BATCH):
            batch = ids[start : start + IN_BATCH]
            marks = ", ".join("?" for _ in batch)
            for row in conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE workspace_id = ? AND id IN ({marks})",
                (workspace_id, *batch),
            ):
                found[row["id"]] = chunk_from_row(row)
        return [found[i] for i in ids if i in found]

    def save_chunk(self, chunk: Chunk) -> None:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE chunks SET content = ?, revision = ?, idx = ?, start_offset = ?, "
                "end_offset = ?, page = ? WHERE id = ? AND workspace_id = ?",
                (
                    chunk.content,
                    chunk.revision,
                    chunk.index,
                    chunk.start,
                    chunk.end,
                    chunk.page,
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
