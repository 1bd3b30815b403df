"""Rows ↔ domain records for the SQLite metadata store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime

from bunko.domain import Chunk, Document, DocumentStatus, Revision
from bunko.domain.documents import decode_page_breaks, encode_page_breaks
from bunko.domain.metadata import terms_of

# A document's fields, then its metadata terms (derived: migration 0010's triggers index them).
DOC_COLUMNS = [f.name for f in fields(Document)] + ["metadata_terms"]
_METADATA = DOC_COLUMNS.index("metadata")
REV_COLUMNS = [f.name for f in fields(Revision)]
CHUNK_COLUMNS = (
    "id, document_id, workspace_id, revision, idx, content, start_offset, end_offset, page, "
    "page_breaks, sentence_terms"
)
INSERT_CHUNK = f"INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
# SQLite limits host parameters per statement; stay well below it.
IN_BATCH = 500


def rows_by_ids(
    conn: sqlite3.Connection, table: str, columns: str, workspace_id: str, ids: Sequence[str]
) -> list[sqlite3.Row]:
    """The workspace's rows of `table` with these ids, each once, in the order asked;
    missing ids are left out."""
    ids = list(dict.fromkeys(ids))
    found: dict[str, sqlite3.Row] = {}
    for start in range(0, len(ids), IN_BATCH):
        batch = ids[start : start + IN_BATCH]
        marks = ", ".join("?" for _ in batch)
        # `+workspace_id`: without it SQLite scans the workspace's index (every chunk of it:
        # 58 ms at 100k chunks, most of a search) instead of looking the ids up (1 ms).
        for row in conn.execute(
            f"SELECT {columns} FROM {table} WHERE +workspace_id = ? AND id IN ({marks})",
            (workspace_id, *batch),
        ):
            found[row["id"]] = row
    return [found[i] for i in ids if i in found]


def _dt(value: str) -> datetime:
    return datetime.fromisoformat(value)


def document_from_row(row: sqlite3.Row) -> Document:
    values = dict(row)
    del values["metadata_terms"]
    values["metadata"] = json.loads(values["metadata"])
    values["status"] = DocumentStatus(values["status"])
    values["created_at"] = _dt(values["created_at"])
    values["updated_at"] = _dt(values["updated_at"])
    return Document(**values)


def revision_from_row(row: sqlite3.Row) -> Revision:
    values = dict(row)
    values["created_at"] = _dt(values["created_at"])
    return Revision(**values)


def chunk_from_row(row: sqlite3.Row) -> Chunk:
    return Chunk(
        id=row["id"],
        document_id=row["document_id"],
        workspace_id=row["workspace_id"],
        revision=row["revision"],
        index=row["idx"],
        content=row["content"],
        start=row["start_offset"],
        end=row["end_offset"],
        page=row["page"],
        page_breaks=decode_page_breaks(row["page_breaks"]),
        sentence_terms=row["sentence_terms"],
    )


def chunk_values(chunk: Chunk, document_id: str, workspace_id: str) -> tuple:
    """The row of INSERT_CHUNK."""
    return (
        chunk.id,
        document_id,
        workspace_id,
        chunk.revision,
        chunk.index,
        chunk.content,
        chunk.start,
        chunk.end,
        chunk.page,
        encode_page_breaks(chunk.page_breaks),
        chunk.sentence_terms,
    )


def _values(record: Document | Revision, columns: list[str]) -> list:
    # Not dataclasses.astuple: it deep-copies every field, a third of a status save's time.
    return [getattr(record, c) for c in columns]


def document_values(document: Document) -> tuple:
    values = _values(document, DOC_COLUMNS[:-1])
    values.append(json.dumps(terms_of(document.metadata, document.category)))
    values[_METADATA] = json.dumps(document.metadata, ensure_ascii=False)
    values[DOC_COLUMNS.index("status")] = str(document.status)
    values[DOC_COLUMNS.index("created_at")] = document.created_at.isoformat()
    values[DOC_COLUMNS.index("updated_at")] = document.updated_at.isoformat()
    return tuple(values)


def revision_values(revision: Revision) -> tuple:
    values = _values(revision, REV_COLUMNS)
    values[REV_COLUMNS.index("created_at")] = revision.created_at.isoformat()
    return tuple(values)
