"""Documents, their revisions and their chunks, as the stores and services see them."""

from __future__ import annotations

import json
import posixpath
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

# The single-user embedded server (auth off) works in this workspace.
DEFAULT_WORKSPACE_ID = "00000000-0000-4000-8000-000000000001"

# Chunk ids are derived from (document, revision, index) so that a re-delivered ingest
# event writes the same ids again instead of adding duplicates.
_CHUNK_NAMESPACE = uuid.UUID("6f1c1a52-7d1e-4b8e-9a43-0b0e5b1f2c11")


def new_id() -> str:
    return str(uuid.uuid4())


def utcnow() -> datetime:
    return datetime.now(UTC)


def chunk_id_for(document_id: str, revision: int, index: int) -> str:
    return str(uuid.uuid5(_CHUNK_NAMESPACE, f"{document_id}:{revision}:{index}"))


class DocumentStatus(StrEnum):
    PENDING = "pending"
    INDEXING = "indexing"
    COMPLETED = "completed"
    FAILED = "failed"


@dataclass
class Workspace:
    id: str
    name: str
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class Document:
    """One logical file in a workspace; `path` is unique per workspace."""

    id: str
    workspace_id: str
    path: str
    name: str
    mime: str
    size: int = 0
    category: str | None = None
    status: DocumentStatus = DocumentStatus.PENDING
    error: str | None = None
    revision: int = 1
    content_hash: str = ""
    chunk_size: int = 1000
    chunk_overlap: int = 200
    chunk_count: int = 0
    # The source that owns it (domain/sources.py): set when it is made, kept by every revision.
    source: str = "api"
    blob_key: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    # The options its uploader chose (REST /upload, a presigned upload), reported back by
    # the file listing: "fast" or "precise", and the embedding model config asked for.
    mode: str = "fast"
    embedding_model_id: str | None = None
    # Key → value metadata its people or agents gave it (domain/metadata/: checked, in
    # canonical form), which searches filter by.
    metadata: dict[str, str | float | list[str]] = field(default_factory=dict)

    # The lifecycle. Each revision is queued (pending), then indexing, then completed or
    # failed; new bytes make a new revision, queued again; the same revision may be queued
    # again (new chunking, a retry). Only these methods change `status` (a test holds it).

    def new_revision(
        self, *, mime: str, size: int, content_hash: str, now: datetime | None = None
    ) -> int:
        """Make the next revision (these bytes) current, queued for indexing; its number. A
        document is made at revision 0, so its first bytes are revision 1."""
        self.revision += 1
        self.mime, self.size, self.content_hash = mime, size, content_hash
        self.queue(now)
        return self.revision

    def queue(self, now: datetime | None = None) -> None:
        """Waiting for the indexer (its error, if it had one, cleared)."""
        self._become(DocumentStatus.PENDING, None, now)

    def start_indexing(self, now: datetime | None = None) -> None:
        self._become(DocumentStatus.INDEXING, self.error, now)

    def complete(self, chunk_count: int, now: datetime | None = None) -> None:
        self.chunk_count = chunk_count
        self._become(DocumentStatus.COMPLETED, None, now)

    def fail(self, error: str, now: datetime | None = None) -> None:
        self._become(DocumentStatus.FAILED, error, now)

    def move_to(self, path: str, now: datetime | None = None) -> None:
        """A new path (and the name it ends in); its revisions and status stay."""
        self.path, self.name = path, posixpath.basename(path)
        self.updated_at = now or utcnow()

    @property
    def settled(self) -> bool:
        """Its current revision is done with, completed or failed: no indexer holds it."""
        return self.status in (DocumentStatus.COMPLETED, DocumentStatus.FAILED)

    def _become(self, status: DocumentStatus, error: str | None, now: datetime | None) -> None:
        self.status, self.error, self.updated_at = status, error, now or utcnow()


@dataclass
class Revision:
    """An immutable revision of a document: its original bytes and its extracted text."""

    document_id: str
    workspace_id: str
    revision: int
    content_hash: str
    blob_key: str
    text_key: str | None = None
    size: int = 0
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class Chunk:
    id: str
    document_id: str
    workspace_id: str
    revision: int
    index: int
    content: str
    start: int = 0  # character offsets in the document's extracted text
    end: int = 0
    page: int | None = None  # the page (PDF), slide (pptx) or sheet (xlsx) it starts on
    # (document offset, page number) of each later page that begins inside the chunk
    page_breaks: tuple[tuple[int, int], ...] = ()
    # how the relevance gate reads its sentences, read at ingest (domain/sentence_terms.py);
    # None for a chunk stored before, or where the store keeps none: the gate reads the text
    sentence_terms: str | None = None

    @property
    def page_end(self) -> int | None:
        """The page it ends on (the start page when it sits on one)."""
        return self.page_breaks[-1][1] if self.page_breaks else self.page

    def page_at(self, offset: int) -> int | None:
        """The page of the character at `offset` into `content`."""
        page = self.page
        for at, number in self.page_breaks:
            if at - self.start > offset:
                break
            page = number
        return page


def encode_page_breaks(breaks: tuple[tuple[int, int], ...]) -> str | None:
    """Stored form of Chunk.page_breaks (None when the chunk sits on one page)."""
    return json.dumps([list(b) for b in breaks], separators=(",", ":")) if breaks else None


def decode_page_breaks(stored: str | None) -> tuple[tuple[int, int], ...]:
    return tuple((int(at), int(page)) for at, page in json.loads(stored)) if stored else ()
