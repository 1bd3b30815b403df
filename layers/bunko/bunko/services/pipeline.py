"""IndexingPipeline: parse → chunk → embed (batched across documents) → index.

Called by the ingest worker (in-process locally, SQS on AWS) with a batch of jobs. A file
that cannot be read ends `failed` with a readable error; the batch goes on. Chunk ids are
derived from (document, revision, index), so re-delivering a job writes the same rows again.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from bunko.chunking import chunk_text
from bunko.domain import Chunk, Document, DocumentStatus, chunk_id_for, utcnow
from bunko.errors import BunkoError, NotFoundError, StaleError
from bunko.parsing import parse
from bunko.ports import (
    BlobStore,
    Embedder,
    IndexEntry,
    IngestJob,
    MetadataStore,
    SearchIndex,
    TrainableEmbedder,
)
from bunko.services.blob_keys import text_key
from bunko.services.index_entries import batched, entries_for

log = logging.getLogger(__name__)

Progress = Callable[[int], None]
# A job whose document was deleted, or given a newer revision, while it was being indexed.
_GONE = (NotFoundError, StaleError)


# A new file with this many chunks waits seconds for its vectors: its text is indexed for
# keyword search first (issue 12: a 904-page PDF took 22 s to become searchable).
EARLY_KEYWORD_CHUNKS = 256


@dataclass
class _Prepared:
    doc: Document
    chunks: list[Chunk]
    early: bool = False  # its chunks are already keyword-searchable


class IndexingPipeline:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        blobs: BlobStore,
        index: SearchIndex,
        embedder: Embedder | None,
        batch_size: int = 64,
    ) -> None:
        self.metadata = metadata
        self.blobs = blobs
        self.index = index
        self.embedder = embedder
        self.batch_size = batch_size

    def process(self, jobs: Sequence[IngestJob]) -> list[Document]:
        """Index a batch of jobs; returns the documents as they ended.

        Embedding overlaps the rest: each group of about `batch_size` chunks is embedded in a
        thread while the next documents are parsed and chunked and the groups already
        embedded are written (the embedder's numpy and HTTP calls release the GIL)."""
        finished: list[Document] = []
        embedded: deque[tuple[list[_Prepared], Future]] = deque()
        group: list[_Prepared] = []
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bunko-embed") as embedder:
            for n, job in enumerate(jobs, start=1):
                prepared = self._prepare_job(job, finished)
                if prepared is not None:
                    self._write_keywords(prepared)
                    group.append(prepared)
                last = n == len(jobs)
                if group and (last or sum(len(p.chunks) for p in group) >= self.batch_size):
                    texts = [c.content for p in group for c in p.chunks]
                    embedded.append((group, embedder.submit(self._embed, texts)))
                    group = []
                while embedded and (last or embedded[0][1].done()):
                    finished += self._write_group(*embedded.popleft())
        return finished

    def _prepare_job(self, job: IngestJob, finished: list[Document]) -> _Prepared | None:
        """Parse and chunk the job's document; None when there is nothing (more) to do."""
        doc = self.metadata.get_document(job.workspace_id, job.document_id)
        if doc is None or doc.revision != job.revision:
            return None  # deleted, or superseded by a newer revision's job
        if doc.status is DocumentStatus.COMPLETED:
            return None  # a re-delivered job for work already done
        try:
            return _Prepared(doc, self._prepare(doc, job.mode))
        except _GONE:
            return None  # deleted or replaced meanwhile: the newer state's job does the rest
        except BunkoError as exc:
            finished += self._fail(doc, str(exc))
        except Exception as exc:  # a parser bug must not take the worker down
            log.exception("ingest of %s failed", doc.path)
            finished += self._fail(doc, f"could not process {doc.name}: {exc}")
        return None

    def _write_keywords(self, p: _Prepared) -> None:
        """Make a large new file keyword-searchable now; its vectors follow (it stays
        `indexing`, and search says such hits were found by the keyword engine alone)."""
        doc = p.doc
        if doc.chunk_count or len(p.chunks) < EARLY_KEYWORD_CHUNKS or self.embedder is None:
            return  # a file with chunks keeps serving them until its new ones are complete
        try:
            self.index.index(entries_for(doc, p.chunks, None))
            self.metadata.replace_chunks(doc.workspace_id, doc.id, p.chunks)
            p.early = True
        except _GONE:
            return  # deleted or replaced meanwhile: the full write cleans up
        except Exception:
            log.exception("early keyword indexing of %s failed", doc.path)

    def _take_back(self, p: _Prepared) -> None:
        """A file that failed after its early keyword entries is not searchable."""
        if not p.early:
            return
        try:
            self.index.delete_document(p.doc.workspace_id, p.doc.id)
            self.metadata.replace_chunks(p.doc.workspace_id, p.doc.id, [])
        except _GONE:
            pass  # deleted meanwhile: nothing of it is left to find

    def _write_group(self, group: list[_Prepared], vectors: Future) -> list[Document]:
        try:
            found: np.ndarray | None = vectors.result()
        except Exception as exc:
            log.exception("embedding failed")
            for p in group:
                self._take_back(p)
            return [d for p in group for d in self._fail(p.doc, f"embedding: {exc}")]
        finished: list[Document] = []
        offset = 0
        for p in group:
            n = len(p.chunks)
            finished += self._write_one(p, None if found is None else found[offset : offset + n])
            offset += n
        return finished

    def _write_one(self, p: _Prepared, vectors: np.ndarray | None) -> list[Document]:
        """Write one document's chunks; a document deleted or replaced while it was indexed
        is left to its newer state, and one that cannot be written fails alone, so the other
        documents of the batch always finish."""
        try:
            return [self._write(p, vectors)]
        except _GONE:
            self._forget(p)
            return []
        except Exception as exc:
            log.exception("writing the chunks of %s failed", p.doc.path)
            self._take_back(p)
            return self._fail(p.doc, f"could not index {p.doc.name}: {exc}")

    def _forget(self, p: _Prepared) -> None:
        """Remove what this stale job wrote to the index, unless the document still has those
        chunks (a newer revision's job cleans up after itself)."""
        doc = p.doc
        if self.metadata.get_document(doc.workspace_id, doc.id) is None:
            self.index.delete_document(doc.workspace_id, doc.id)
            self.blobs.delete_prefix(f"texts/{doc.workspace_id}/{doc.id}/")
            return
        kept = {c.id for c in self.metadata.get_chunks(doc.workspace_id, doc.id)}
        written = [c.id for c in p.chunks if c.id not in kept]
        if written:
            self.index.delete_chunks(doc.workspace_id, written)

    def _prepare(self, doc: Document, mode: str = "fast") -> list[Chunk]:
        doc.status, doc.updated_at = DocumentStatus.INDEXING, utcnow()
        self.metadata.save_document(doc, if_revision=doc.revision)
        parsed = parse(self._original(doc), filename=doc.name, mime=doc.mime, mode=mode)
        self.blobs.put(
            text_key(doc.workspace_id, doc.id, doc.revision),
            parsed.text.encode("utf-8"),
            content_type="text/plain; charset=utf-8",
        )
        pieces = chunk_text(
            parsed.text,
            chunk_size=doc.chunk_size,
            chunk_overlap=doc.chunk_overlap,
            pages=parsed.pages or None,
        )
        if not pieces:
            raise BunkoError(f"no text could be extracted from {doc.name}")
        return [
            Chunk(
                id=chunk_id_for(doc.id, doc.revision, i),
                document_id=doc.id,
                workspace_id=doc.workspace_id,
                revision=doc.revision,
                index=i,
                content=p.content,
                start=p.start,
                end=p.end,
                page=p.page,
            )
            for i, p in enumerate(pieces)
        ]

    def _original(self, doc: Document) -> bytes:
        try:
            return self.blobs.get(doc.blob_key or "")
        except NotFoundError:
            current = self.metadata.get_document(doc.workspace_id, doc.id)
            if current is None or current.revision != doc.revision:
                raise  # deleted or replaced meanwhile
            # The process that received the file stopped before it stored the bytes.
            raise BunkoError(
                f"the file {doc.name} was never fully received; send it again"
            ) from None

    def _embed(self, texts: list[str]) -> np.ndarray | None:
        if self.embedder is None or not texts:
            return None
        if isinstance(self.embedder, TrainableEmbedder) and not self.embedder.is_fitted:
            return None  # LSA before its first training: keyword search only
        parts = [
            self.embedder.embed_documents(texts[i : i + self.batch_size])
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(parts).astype(np.float32, copy=False)

    def _write(self, p: _Prepared, vectors: np.ndarray | None) -> Document:
        doc = p.doc
        current = self.metadata.get_document(doc.workspace_id, doc.id)
        if current is None:
            raise NotFoundError(f"document {doc.id} was deleted while it was indexed")
        if current.revision != doc.revision:
            raise StaleError(f"document {doc.id} has a newer revision")
        old_ids = {c.id for c in self.metadata.get_chunks(doc.workspace_id, doc.id)}
        self.index.index(entries_for(doc, p.chunks, vectors))
        self.metadata.replace_chunks(doc.workspace_id, doc.id, p.chunks)
        stale = old_ids - {c.id for c in p.chunks}
        if stale:
            self.index.delete_chunks(doc.workspace_id, sorted(stale))
        doc.status, doc.error = DocumentStatus.COMPLETED, None
        doc.chunk_count, doc.updated_at = len(p.chunks), utcnow()
        self.metadata.save_document(doc, if_revision=doc.revision)
        return doc

    def _fail(self, doc: Document, message: str) -> list[Document]:
        """Record the failure, unless the document was deleted or replaced meanwhile."""
        doc.status, doc.error, doc.updated_at = DocumentStatus.FAILED, message, utcnow()
        try:
            self.metadata.save_document(doc, if_revision=doc.revision)
        except _GONE:
            return []
        return [doc]

    def reindex(
        self,
        workspace_id: str | None = None,
        *,
        retrain: bool = False,
        progress: Progress | None = None,
        keywords_first: bool = False,
    ) -> int:
        """Rebuild the index from metadata (DESIGN decision 1); with an LSA embedder and
        `retrain`, fit it on every chunk first. `keywords_first`: every chunk's keyword entry
        is written before any vector, so search finds everything by its words within seconds
        while a slow model embeds (entry counts then no longer show a rebuild killed midway:
        the caller marks it unfinished until this returns). Returns the chunks indexed."""
        if retrain and isinstance(self.embedder, TrainableEmbedder):
            self.embedder.fit([c.content for c in self.metadata.iter_chunks(workspace_id)])
        self.index.clear(workspace_id)
        documents = {d.id: d for d in self.metadata.iter_documents(workspace_id)}
        first = keywords_first and self.embedder is not None
        total = 0
        for with_vectors in (False, True) if first else (True,):
            total = 0
            for batch in batched(self.metadata.iter_chunks(workspace_id), self.batch_size * 4):
                kept = [c for c in batch if c.document_id in documents]
                vectors = self._embed([c.content for c in kept]) if with_vectors else None
                entries: list[IndexEntry] = []
                for i, chunk in enumerate(kept):
                    vector = None if vectors is None else vectors[i : i + 1]
                    entries += entries_for(documents[chunk.document_id], [chunk], vector)
                self.index.index(entries)
                total += len(entries)
                if progress and with_vectors:
                    progress(len(batch))
        return total
