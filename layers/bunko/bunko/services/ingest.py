"""IngestService: the write side. Accepts files and text, keeps the original, queues indexing.

Idempotent (DESIGN decision 3): the same bytes at the same path add no revision and no
chunks; changed bytes add revision + 1, and the old revision's original and text stay in the
blob store for sealed research corpora.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass

from bunko.domain import Document, DocumentStatus, Revision, new_id, utcnow
from bunko.errors import NotFoundError, PayloadTooLargeError, ValidationError
from bunko.parsing import guess_mime
from bunko.ports import BlobStore, IngestJob, IngestQueue, MetadataStore, SearchIndex
from bunko.services.text_safety import check_name
from bunko.services.upload_quota import UploadQuota

MAX_PATH_LENGTH = 1024


@dataclass(frozen=True)
class IngestDefaults:
    chunk_size: int
    chunk_overlap: int
    max_file_bytes: int


def original_key(workspace_id: str, document_id: str, revision: int) -> str:
    return f"originals/{workspace_id}/{document_id}/{revision}"


def text_key(workspace_id: str, document_id: str, revision: int) -> str:
    return f"texts/{workspace_id}/{document_id}/{revision}.txt"


def normalise_path(path: str) -> str:
    """A logical path: '/'-separated, no empty or dot segments, no control characters."""
    if not isinstance(path, str) or not path.strip():
        raise ValidationError("path must be a non-empty string")
    if len(path) > MAX_PATH_LENGTH:
        raise ValidationError(f"path is longer than {MAX_PATH_LENGTH} characters")
    check_name(path, field="path")
    cleaned = posixpath.normpath(path.strip().replace("\\", "/")).lstrip("/")
    if cleaned in ("", ".") or cleaned.startswith(".."):
        raise ValidationError(f"invalid path {path!r}")
    return cleaned


class IngestService:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        blobs: BlobStore,
        index: SearchIndex,
        queue: IngestQueue,
        defaults: IngestDefaults,
    ) -> None:
        self.metadata = metadata
        self.blobs = blobs
        self.index = index
        self.queue = queue
        self.defaults = defaults
        self.quota: UploadQuota | None = None  # set by the composition root with accounts

    def submit_file(
        self,
        workspace_id: str,
        *,
        path: str,
        data: bytes,
        mime: str | None = None,
        category: str | None = None,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        source: str = "api",
    ) -> Document:
        """Store the original and queue it; returns the document (status pending, or as it was
        when nothing changed)."""
        path = normalise_path(path)
        if len(data) > self.defaults.max_file_bytes:
            raise PayloadTooLargeError(
                f"file is {len(data)} bytes; the limit is {self.defaults.max_file_bytes} bytes"
            )
        size = chunk_size or self.defaults.chunk_size
        overlap = self.defaults.chunk_overlap if chunk_overlap is None else chunk_overlap
        if size <= 0 or not 0 <= overlap < size:
            raise ValidationError("chunkOverlap must be at least 0 and smaller than chunkSize")
        name = posixpath.basename(path)
        mime = mime or guess_mime(name, data)
        digest = hashlib.sha256(data).hexdigest()
        category = category or None
        doc = self.metadata.get_document_by_path(workspace_id, path)

        if doc is not None and doc.content_hash == digest:
            settings_same = (doc.chunk_size, doc.chunk_overlap, doc.category) == (
                size,
                overlap,
                category,
            )
            if settings_same and doc.status is not DocumentStatus.FAILED:
                return doc  # identical re-delivery: nothing to do
            # Same bytes, new chunking or category (or a retry): re-index the same revision.
            doc.chunk_size, doc.chunk_overlap, doc.category = size, overlap, category
            return self._queue(doc)

        if self.quota is not None:
            self.quota.admit(
                workspace_id, len(data), source=source, replaces=doc.size if doc else 0
            )
        now = utcnow()
        if doc is None:
            doc = Document(
                id=new_id(),
                workspace_id=workspace_id,
                path=path,
                name=name,
                mime=mime,
                revision=1,
                created_at=now,
                source=source,
            )
            is_new = True
        else:
            doc.revision += 1
            is_new = False
        key = original_key(workspace_id, doc.id, doc.revision)
        self.blobs.put(key, data, content_type=mime)
        doc.mime, doc.size, doc.content_hash, doc.blob_key = mime, len(data), digest, key
        doc.chunk_size, doc.chunk_overlap, doc.category = size, overlap, category
        doc.status, doc.error, doc.updated_at = DocumentStatus.PENDING, None, now
        if is_new:
            self.metadata.add_document(doc)
        self.metadata.add_revision(
            Revision(
                document_id=doc.id,
                workspace_id=workspace_id,
                revision=doc.revision,
                content_hash=digest,
                blob_key=key,
                text_key=text_key(workspace_id, doc.id, doc.revision),
                size=len(data),
                created_at=now,
            )
        )
        return self._queue(doc, save=not is_new)

    def submit_text(
        self,
        workspace_id: str,
        *,
        path: str,
        content: str,
        mime: str | None = None,
        category: str | None = None,
        source: str = "agent",
    ) -> Document:
        """Text written by an agent or a client, stored as a UTF-8 file at `path`."""
        if not isinstance(content, str) or not content.strip():
            raise ValidationError("content must be a non-empty string")
        return self.submit_file(
            workspace_id,
            path=path,
            data=content.encode("utf-8"),
            mime=mime or guess_mime(posixpath.basename(normalise_path(path))) or "text/plain",
            category=category,
            source=source,
        )

    def _queue(self, doc: Document, *, save: bool = True) -> Document:
        doc.status, doc.error, doc.updated_at = DocumentStatus.PENDING, None, utcnow()
        if save:
            self.metadata.save_document(doc)
        self.queue.enqueue(
            IngestJob(workspace_id=doc.workspace_id, document_id=doc.id, revision=doc.revision)
        )
        return doc

    def delete_document(self, workspace_id: str, document_id: str) -> Document:
        """Remove the document, its chunks, its index entries and its blobs."""
        doc = self.metadata.get_document(workspace_id, document_id)
        if doc is None:
            raise NotFoundError(f"document {document_id} not found")
        self.index.delete_document(workspace_id, document_id)
        self.metadata.delete_document(workspace_id, document_id)
        self.blobs.delete_prefix(f"originals/{workspace_id}/{document_id}/")
        self.blobs.delete_prefix(f"texts/{workspace_id}/{document_id}/")
        return doc

    def delete_by_path(self, workspace_id: str, path: str) -> Document | None:
        doc = self.metadata.get_document_by_path(workspace_id, normalise_path(path))
        return self.delete_document(workspace_id, doc.id) if doc else None
