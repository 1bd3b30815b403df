"""Plain data: workspaces, documents, revisions and chunks. No I/O here."""

from bunko.domain.documents import (
    DEFAULT_WORKSPACE_ID,
    Chunk,
    Document,
    DocumentStatus,
    Revision,
    Workspace,
    chunk_id_for,
    new_id,
    utcnow,
)

__all__ = [
    "DEFAULT_WORKSPACE_ID",
    "Chunk",
    "Document",
    "DocumentStatus",
    "Revision",
    "Workspace",
    "chunk_id_for",
    "new_id",
    "utcnow",
]
