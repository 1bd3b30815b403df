"""IngestService: the write side. Accepts files and text, keeps the original, queues indexing.

Idempotent (DESIGN decision 3): the same bytes at the same path add no revision and no
chunks; changed bytes add revision + 1, and the old revision's original and text stay in the
blob store for sealed research corpora.
"""

from __future__ import annotations

import hashlib
import posixpath
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from bunko.domain import Document, DocumentStatus, Revision, new_id, utcnow
from bunko.domain.front_matter import with_front_matter
from bunko.domain.ingest_options import IngestDefaults
from bunko.domain.sources import AGENT, CLI, UPLOAD
from bunko.errors import ConflictError, NotFoundError, StaleError, ValidationError
from bunko.parsing import guess_mime
from bunko.parsing.document import normalize_text
from bunko.ports import BlobStore, IngestJob, IngestQueue, MetadataStore
from bunko.ports.embedding_generations import EmbeddingGenerations
from bunko.services.embedding import delete_document_everywhere, relabel_document_everywhere
from bunko.services.ingest.mirror import Mirrored, gone_and_renamed, move
from bunko.services.ingest.upload import Upload
from bunko.services.ingest.upload_policy import UploadPolicy, numbered
from bunko.services.ingest.upload_quota import UploadQuota
from bunko.services.library import original_key, text_key

# Writers racing for one path or name: how often to read again before answering 409. Each
# round one racer wins, so k racers need up to k - 1 retries; a random pause spreads them.
_ATTEMPTS = 16


# `report.pdf`, `report (2).pdf`, ...: how many same-name files one upload looks past.
MAX_SAME_NAME = 1000


class IngestService:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        blobs: BlobStore,
        queue: IngestQueue,
        defaults: IngestDefaults,
        policy: UploadPolicy,
        generations: EmbeddingGenerations,  # the model and index generation of each workspace
        quota: UploadQuota | None = None,  # bytes and uploads per workspace (with accounts)
    ) -> None:
        self.metadata = metadata
        self.blobs = blobs
        self.generations = generations
        self.queue = queue
        self.defaults = defaults
        self.policy = policy
        self.quota = quota

    def submit(self, upload: Upload) -> Document:
        """Store the upload's bytes and queue them; returns the document (status pending, or
        as it was when nothing changed). A file at an existing path gets a new revision; the
        same bytes again change nothing (re-delivery is idempotent), except in mode
        "precise", which also OCRs page images and so always reads the file again. A new file
        by name is a new document even when another file has its name: it takes the first
        free path of `name`, `name (2)`, ...; the same bytes under the same name return the
        document that already holds them (an upload retried is not a copy)."""
        if not upload.policy_checked:
            upload = self.policy.check(upload)
        size, overlap = self.defaults.chunking(upload.chunk_size, upload.chunk_overlap)
        workspace_id, path = upload.workspace_id, upload.path
        if upload.replaces is not None and path is None:
            raise ValueError("an upload that replaces a document names the document's path")
        name = posixpath.basename(path) if path is not None else upload.name or ""
        upload = replace(
            upload,
            name=name,
            mime=upload.mime or guess_mime(name, upload.data),
            category=upload.category or None,
            chunk_size=size,
            chunk_overlap=overlap,
            # a Markdown file's front matter tags it through every door; the door's keys win
            metadata=with_front_matter(name, upload.data, upload.metadata, where=path or name),
        )
        digest = hashlib.sha256(upload.data).hexdigest()
        n, failures = 1, 0
        while True:
            at = path if path is not None else numbered(name, n)
            doc = self.metadata.get_document_by_path(workspace_id, at)
            if path is None and doc is not None and doc.content_hash != digest:
                n += 1  # another file has this name: the next number
                if n > MAX_SAME_NAME:
                    raise ConflictError(f"too many files named {name}; rename the file")
                continue
            try:
                return self._write(upload, at, doc, digest)
            except (StaleError, ConflictError):
                failures += 1  # another writer won meanwhile: look at the path again
                if failures >= _ATTEMPTS:
                    break
                time.sleep(random.uniform(0, 0.002 * failures))
        if path is None:
            raise ConflictError(f"too many files named {name}; rename the file")
        raise ConflictError(f"{path} is being written by others; try again")

    def _write(self, upload: Upload, path: str, doc: Document | None, digest: str) -> Document:
        """Write `upload` (resolved: its name, type and chunking) at `path`, where `doc` was
        found; a new file that lost `path` meanwhile, or a revision that lost its race,
        raises ConflictError or StaleError (the caller looks again)."""
        if upload.replaces is not None and (doc is None or doc.id != upload.replaces):
            raise NotFoundError(f"document {upload.replaces} not found")
        data, mode = upload.data, upload.mode or "fast"
        chunking = (upload.chunk_size, upload.chunk_overlap, upload.category)
        if doc is not None and doc.content_hash == digest:
            same = (doc.chunk_size, doc.chunk_overlap, doc.category) == chunking
            done = doc.status is DocumentStatus.COMPLETED
            if same and done and mode == "fast":  # identical re-delivery: nothing to index
                relabel = _keep_metadata(doc, upload)
                if _keep_options(doc, upload) or relabel:
                    self.metadata.save_document(doc, if_revision=doc.revision)
                if relabel:
                    relabel_document_everywhere(self.generations, doc)
                return doc
            # Same bytes, new chunking or category, a retry of a failure, or a re-delivery for
            # work a dead process left pending or indexing: index the same revision again
            # (chunk ids are per revision, so this writes the same rows, never new ones).
            if not done and not self.blobs.exists(doc.blob_key or ""):
                self._store_original(doc, data)  # it died between the claim and the bytes
            doc.chunk_size, doc.chunk_overlap, doc.category = chunking
            _keep_options(doc, upload)
            _keep_metadata(doc, upload)
            return self._queue(doc, if_revision=doc.revision, mode=mode)

        workspace_id = upload.workspace_id
        if self.quota is not None:
            source = CLI if upload.by_operator else upload.source
            self.quota.admit(
                workspace_id, len(data), source=source, replaces=doc.size if doc else 0
            )
        now = utcnow()
        previous = None if doc is None else doc.revision
        if doc is None:
            doc = Document(
                id=new_id(),
                workspace_id=workspace_id,
                path=path,
                name=upload.name or path,
                mime=upload.mime or "",
                revision=0,  # its first bytes, below, are revision 1
                created_at=now,
                source=upload.source,
            )
        doc.new_revision(mime=upload.mime or "", size=len(data), content_hash=digest, now=now)
        doc.blob_key = original_key(workspace_id, doc.id, doc.revision)
        doc.chunk_size, doc.chunk_overlap, doc.category = chunking
        _keep_options(doc, upload)
        _keep_metadata(doc, upload)
        # Claim the path (new) or the revision (conditional on the one read) before any
        # bytes are written, so a racing writer can never overwrite this revision's original
        # and a worker still busy with the old revision cannot save over the new one.
        if previous is None:
            self.metadata.add_document(doc)
        else:
            self.metadata.save_document(doc, if_revision=previous)
        self._store_original(doc, data)
        return self._queue(doc, save=False, mode=mode)

    def _store_original(self, doc: Document, data: bytes) -> None:
        """Write the revision's bytes and its record (both idempotent: one key per revision)."""
        self.blobs.put(doc.blob_key or "", data, content_type=doc.mime)
        revision = Revision(
            document_id=doc.id,
            workspace_id=doc.workspace_id,
            revision=doc.revision,
            content_hash=doc.content_hash,
            blob_key=doc.blob_key or "",
            size=doc.size,
            created_at=doc.updated_at,
            text_key=text_key(doc.workspace_id, doc.id, doc.revision),
        )
        try:
            self.metadata.add_revision(revision)
        except NotFoundError:  # deleted while this was written: leave no original behind
            self.blobs.delete_prefix(f"originals/{doc.workspace_id}/{doc.id}/")
            raise

    def submit_text(
        self,
        workspace_id: str,
        *,
        path: str,
        content: str,
        mime: str | None = None,
        category: str | None = None,
        source: str = AGENT,
        metadata: dict[str, str | float | list[str]] | None = None,
    ) -> Document:
        """Text written by an agent or a client, stored as a UTF-8 file at `path`;
        `metadata` (checked) replaces the document's, None keeps it."""
        if not isinstance(content, str) or not content.strip():
            raise ValidationError("content must be a non-empty string")
        if not normalize_text(content):  # refused now: stored, it would end a failed revision
            raise ValidationError("content holds no text (only blanks or control characters)")
        upload = Upload(
            workspace_id,
            content.encode("utf-8"),
            path=path,
            category=category,
            source=source,
            metadata=metadata,
        )
        upload = self.policy.check(upload)
        mime = mime or guess_mime(posixpath.basename(upload.path or ""))
        return self.submit(replace(upload, mime=mime))

    def _queue(
        self,
        doc: Document,
        *,
        save: bool = True,
        if_revision: int | None = None,
        mode: str = "fast",
    ) -> Document:
        doc.queue()
        if save:
            self.metadata.save_document(doc, if_revision=if_revision)
        self.queue.enqueue(
            IngestJob(
                workspace_id=doc.workspace_id, document_id=doc.id, revision=doc.revision, mode=mode
            )
        )
        return doc

    def wait_for_queue(self, timeout: float) -> bool:
        """Wait at most `timeout` seconds for this process's queue (the worker thread's) to
        run dry; True once it has. `bunko ingest` waits so between its progress updates."""
        return self.queue.join(timeout=timeout)

    def set_metadata(
        self, workspace_id: str, document_id: str, metadata: dict[str, str | float | list[str]]
    ) -> Document:
        """Replace the document's metadata (checked by the door: domain/metadata
        .check_metadata). Its bytes are not read again; its index entries answer to the new
        terms at once."""
        for _ in range(_ATTEMPTS):
            doc = self.metadata.get_document(workspace_id, document_id)
            if doc is None:
                raise NotFoundError(f"document {document_id} not found")
            if doc.metadata == metadata:
                return doc
            doc.metadata, doc.updated_at = dict(metadata), utcnow()
            try:
                self.metadata.save_document(doc, if_revision=doc.revision)
            except StaleError:
                continue  # a new revision meanwhile: edit that one
            relabel_document_everywhere(self.generations, doc)
            return doc
        raise ConflictError(f"document {document_id} is being written by others; try again")

    def delete_document(self, workspace_id: str, document_id: str) -> Document:
        """Remove the document, its chunks, its index entries and its blobs."""
        doc = self.metadata.get_document(workspace_id, document_id)
        if doc is None:
            raise NotFoundError(f"document {document_id} not found")
        # Metadata first: a worker indexing it meanwhile then fails its save and cleans up.
        self.metadata.delete_document(workspace_id, document_id)
        delete_document_everywhere(self.generations, workspace_id, document_id)
        self.blobs.delete_prefix(f"originals/{workspace_id}/{document_id}/")
        self.blobs.delete_prefix(f"texts/{workspace_id}/{document_id}/")
        return doc

    def discard_failed_new(self, doc: Document) -> bool:
        """Delete a document whose first revision failed to index (the upload policy's rule
        for callers that wait for the result); True if it was deleted."""
        if self.policy.keep_failed(doc):
            return False
        try:
            self.delete_document(doc.workspace_id, doc.id)
        except NotFoundError:
            return False
        return True

    def mirror(
        self,
        workspace_id: str,
        source: str,
        seen: Iterable[str],
        *,
        within: Iterable[str] | None = None,
        moved: Mapping[str, str] | None = None,
        fingerprint: Callable[[str], str | None] | None = None,
    ) -> Mirrored:
        """Keep the library in step with what `source` sees now (services/ingest/mirror.py):
        its documents at paths it no longer sees are deleted, or renamed when `moved` or
        `fingerprint` tells a rename; no other source's document is touched. A door calls
        this before it submits what it sees, so a renamed file's submit finds its document."""
        gone, renames = gone_and_renamed(
            self.metadata,
            workspace_id,
            source,
            seen,
            within=within,
            moved=moved,
            fingerprint=fingerprint,
        )
        done = Mirrored()
        kept: set[str] = set()
        for doc, path in renames:
            old = doc.path
            moved_doc = move(self.metadata, doc, path)
            if moved_doc is not None:
                kept.add(doc.id)
                done.renamed.append((old, moved_doc))
        for doc in gone:
            if doc.id in kept:
                continue
            try:
                done.deleted.append(self.delete_document(workspace_id, doc.id))
            except NotFoundError:
                continue  # deleted meanwhile (by hand, or another mirror)
        return done

    def has_workspace(self, workspace_id: str) -> bool:
        return self.metadata.get_workspace(workspace_id) is not None

    def admit_presigned(self, workspace_id: str, path: str, size: int) -> None:
        """Admit an upload about to be signed (its pace and the storage quota, as /upload's);
        its ingest checks the quota again when the file arrives (PRESIGNED_SOURCE)."""
        if self.quota is None:
            return
        doc = self.metadata.get_document_by_path(workspace_id, path)
        self.quota.admit(workspace_id, size, source=UPLOAD, replaces=doc.size if doc else 0)

    def document_at(self, workspace_id: str, path: str) -> Document | None:
        """The document at `path` (normalised, as `normalise_path` gives it), if any."""
        return self.metadata.get_document_by_path(workspace_id, path)


def _keep_metadata(doc: Document, upload: Upload) -> bool:
    """Put the upload's metadata (when it brings some) on the document; True when that
    changed it."""
    if upload.metadata is None or doc.metadata == upload.metadata:
        return False
    doc.metadata = dict(upload.metadata)
    return True


def _keep_options(doc: Document, upload: Upload) -> bool:
    """Put the options the upload chose (when its door chooses them) on the document; True
    when they changed it."""
    mode, model = upload.mode, upload.embedding_model_id
    if mode is None or (doc.mode, doc.embedding_model_id) == (mode, model):
        return False
    doc.mode, doc.embedding_model_id = mode, model
    return True
