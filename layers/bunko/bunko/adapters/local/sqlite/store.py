"""SqliteMetadataStore: workspaces, documents and revisions in SQLite; chunks come from
`SqliteChunkStore` (sqlite/chunks.py) and group writes from `SqliteDocumentWrites`, so the one
class is the whole MetadataStore."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from datetime import datetime

from bunko.adapters.local.sqlite.chunks import SqliteChunkStore
from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.document_listing import find_documents
from bunko.adapters.local.sqlite.document_writes import SqliteDocumentWrites
from bunko.adapters.local.sqlite.metadata_filter import matching_document_ids
from bunko.adapters.local.sqlite.rows import (
    DOC_COLUMNS,
    REV_COLUMNS,
    document_from_row,
    document_values,
    revision_from_row,
    revision_values,
    rows_by_ids,
)
from bunko.domain import Document, Revision, Workspace
from bunko.domain.document_query import DocumentPage, DocumentQuery
from bunko.domain.metadata import Filter as MetadataFilter
from bunko.errors import ConflictError, NotFoundError, StaleError
from bunko.ports.metadata import LibraryTotals


class SqliteMetadataStore(SqliteChunkStore, SqliteDocumentWrites):
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

    def save_document(self, document: Document, *, if_revision: int | None = None) -> None:
        columns = [c for c in DOC_COLUMNS if c not in ("id", "workspace_id")]
        values = dict(zip(DOC_COLUMNS, document_values(document), strict=True))
        assignments = ", ".join(f"{c} = ?" for c in columns)
        # `revision = COALESCE(?, revision)`: the condition holds for any revision when None.
        try:
            with self.db.transaction() as conn:
                cursor = conn.execute(
                    f"UPDATE documents SET {assignments} WHERE id = ? AND workspace_id = ?"
                    " AND revision = COALESCE(?, revision)",
                    (
                        *(values[c] for c in columns),
                        document.id,
                        document.workspace_id,
                        if_revision,
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"path {document.path!r} is taken in this workspace") from exc
        if cursor.rowcount == 0:
            if if_revision is not None and self.get_document(document.workspace_id, document.id):
                raise StaleError(f"document {document.id} is no longer at revision {if_revision}")
            raise NotFoundError(f"document {document.id} not found")

    def _document_where(self, where: str, *params: str) -> Document | None:
        row = self.db.connect().execute(f"SELECT * FROM documents WHERE {where}", params)
        found = row.fetchone()
        return document_from_row(found) if found else None

    def get_document(self, workspace_id: str, document_id: str) -> Document | None:
        return self._document_where("id = ? AND workspace_id = ?", document_id, workspace_id)

    def get_documents_by_ids(
        self, workspace_id: str, document_ids: Sequence[str]
    ) -> list[Document]:
        rows = rows_by_ids(self.db.connect(), "documents", "*", workspace_id, document_ids)
        return [document_from_row(row) for row in rows]

    def get_document_by_path(self, workspace_id: str, path: str) -> Document | None:
        return self._document_where("workspace_id = ? AND path = ?", workspace_id, path)

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

    def find_documents(
        self, workspace_id: str, query: DocumentQuery, *, limit: int, offset: int = 0
    ) -> DocumentPage:
        return find_documents(self.db.connect(), workspace_id, query, limit=limit, offset=offset)

    def count_documents(self, workspace_id: str, *, category: str | None = None) -> int:
        sql = "SELECT COUNT(*) FROM documents WHERE workspace_id = ?"
        params: list = [workspace_id]
        if category is not None:
            sql += " AND category = ?"
            params.append(category)
        return self.db.connect().execute(sql, params).fetchone()[0]

    def library_totals(self, workspace_id: str) -> LibraryTotals:
        # The workspace's rows by its index: no counter to keep in step on one machine.
        documents, size = (
            self.db.connect()
            .execute(
                "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM documents WHERE workspace_id = ?",
                (workspace_id,),
            )
            .fetchone()
        )
        return LibraryTotals(documents=documents, bytes=size)

    def documents_matching(self, workspace_id: str, flt: MetadataFilter) -> frozenset[str]:
        return matching_document_ids(self.db.connect(), workspace_id, flt)

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

    def iter_source_documents(self, workspace_id: str, source: str) -> Iterator[Document]:
        rows = (
            self.db.connect()
            .execute(
                "SELECT * FROM documents WHERE workspace_id = ? AND source = ? ORDER BY path",
                (workspace_id, source),
            )
            .fetchall()
        )
        for row in rows:
            yield document_from_row(row)

    def source_document_ids(self, workspace_id: str, source: str) -> frozenset[str]:
        rows = (
            self.db.connect()
            .execute(
                "SELECT id FROM documents WHERE workspace_id = ? AND source = ?",
                (workspace_id, source),
            )
            .fetchall()
        )
        return frozenset(row[0] for row in rows)

    # revisions
    def add_revision(self, revision: Revision) -> None:
        placeholders = ", ".join("?" for _ in REV_COLUMNS)
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT OR REPLACE INTO revisions ({', '.join(REV_COLUMNS)}) "
                    f"VALUES ({placeholders})",
                    revision_values(revision),
                )
        except sqlite3.IntegrityError as exc:  # the document was deleted meanwhile
            raise NotFoundError(f"document {revision.document_id} not found") from exc

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
