"""SqliteDocumentWrites: a group of documents' chunks and statuses in one transaction (the
ingest pipeline's write per embedding batch, instead of three transactions a document)."""

from __future__ import annotations

from collections.abc import Sequence

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.rows import (
    DOC_COLUMNS,
    INSERT_CHUNK,
    chunk_values,
    document_values,
)
from bunko.ports import DocumentWrite

# Not the metadata: an edit made while the document was indexed must outlive the pipeline's
# save of the copy it read before.
_SAVED = [c for c in DOC_COLUMNS if c not in ("id", "workspace_id", "metadata", "metadata_terms")]
_SAVE = (
    f"UPDATE documents SET {', '.join(f'{c} = ?' for c in _SAVED)}"
    " WHERE id = ? AND workspace_id = ? AND revision = ?"
)


class SqliteDocumentWrites:
    """The `DocumentWrites` capability of the embedded metadata store."""

    db: SqliteDatabase

    def write_documents(self, writes: Sequence[DocumentWrite]) -> list[list[str] | None]:
        results: list[list[str] | None] = []
        with self.db.transaction() as conn:
            for write in writes:
                doc = write.document
                values = dict(zip(DOC_COLUMNS, document_values(doc), strict=True))
                # Conditional on the revision: a deleted or newer document is left alone.
                saved = conn.execute(
                    _SAVE, (*(values[c] for c in _SAVED), doc.id, doc.workspace_id, doc.revision)
                )
                if saved.rowcount == 0:
                    results.append(None)
                    continue
                if write.chunks is None:
                    results.append([])
                    continue
                new = {c.id for c in write.chunks}
                where = (doc.id, doc.workspace_id)
                old = conn.execute(
                    "SELECT id FROM chunks WHERE document_id = ? AND workspace_id = ?", where
                )
                results.append([r[0] for r in old if r[0] not in new])
                conn.execute("DELETE FROM chunks WHERE document_id = ? AND workspace_id = ?", where)
                conn.executemany(
                    INSERT_CHUNK, [chunk_values(c, doc.id, doc.workspace_id) for c in write.chunks]
                )
        return results
