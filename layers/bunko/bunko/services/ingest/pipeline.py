"""IndexingPipeline: parse → chunk → embed (batched across documents) → index.

Called by the ingest worker (in-process locally, SQS on AWS) with a batch of jobs. A file
that cannot be read ends `failed` with a readable error; the batch goes on. Chunk ids are
derived from (document, revision, index), so re-delivering a job writes the same rows again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from bunko.domain import Chunk, Document, DocumentStatus, utcnow
from bunko.errors import BunkoError, NotFoundError, StaleError
from bunko.ports import (
    BlobStore,
    DocumentWrite,
    Embedder,
    EmbeddingGeneration,
    EmbeddingGenerations,
    IngestJob,
    MetadataStore,
    write_targets,
)
from bunko.services.embedding import (
    embed_texts,
    entries_for,
    reindex_served,
    relabel_document_everywhere,
)
from bunko.services.ingest.document_chunks import parse_and_chunk
from bunko.services.ingest.document_writes import write_documents
from bunko.services.ingest.embed_stream import EmbedStream, Vectors
from bunko.services.ingest.job_routing import JobRouting, MoreJobs
from bunko.services.ingest.known_vectors import KnownVectors

log = logging.getLogger(__name__)

# A job whose document was deleted, or given a newer revision, while it was being indexed.
_GONE = (NotFoundError, StaleError)


# A new file with this many chunks waits seconds for its vectors: its text is indexed for
# keyword search first (issue 12: a 904-page PDF took 22 s to become searchable).
EARLY_KEYWORD_CHUNKS = 256
# Documents marked `indexing` per write: a few, so the first embedding starts soon.
CLAIM_JOBS = 16


@dataclass
class _Prepared:
    doc: Document
    chunks: list[Chunk]
    generation: EmbeddingGeneration  # the generation whose model embedded its vectors
    early: bool = False  # its chunks are already keyword-searchable


class IndexingPipeline:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        blobs: BlobStore,
        generations: EmbeddingGenerations,
        batch_size: int = 64,
        read_sentences: Callable[[str], str] | None = None,
    ) -> None:
        """`generations`: which model and index generation serve each workspace;
        `read_sentences`: a chunk's text → its sentences as the relevance gate reads them
        (Chunk.sentence_terms), stored with it so no question has to read them."""
        self.metadata = metadata
        self.blobs = blobs
        self.generations = generations
        self.batch_size = batch_size
        self.read_sentences = read_sentences
        # Vectors to take instead of embedding their texts again (`bunko import` of an archive
        # exported with its vectors, by the same model), while that import runs.
        self.known: KnownVectors | None = None

    def process(self, jobs: Sequence[IngestJob], more: MoreJobs | None = None) -> list[Document]:
        """Index a batch of jobs, grouped by the model that serves their workspace (each
        group is embedded by its model); returns the documents as they ended. `more`: the
        jobs queued since (the worker's), taken into the last group's stream as its jobs run
        out, so the embedder does not wait between batches (adapters/local/worker.py)."""
        finished: list[Document] = []
        routing = JobRouting(self.generations)
        while jobs:
            groups = list(routing.groups(jobs).values())
            later: list[IngestJob] = []  # other models' jobs from `more`: groups of their own
            for n, (generation, group) in enumerate(groups):
                last = more is not None and n == len(groups) - 1
                take = routing.taking(generation.model, more, later) if last else None
                finished += self._process(generation, group, take)
            jobs = later
        return finished

    def _process(
        self,
        generation: EmbeddingGeneration,
        jobs: Sequence[IngestJob],
        more: MoreJobs | None = None,
    ) -> list[Document]:
        """Index jobs of workspaces that `generation` serves.

        Documents are marked `indexing` a few at a time, in one write each. Embedding overlaps
        the rest: the chunks of successive documents are embedded in a thread in batches of
        exactly `batch_size` while the next documents are parsed and chunked, and the
        documents whose vectors are ready are written together (one index call, one metadata
        transaction). The embedder's numpy and HTTP calls release the GIL."""
        finished: list[Document] = []
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bunko-embed") as executor:
            stream: EmbedStream[_Prepared] = EmbedStream(
                lambda texts: self._embed(generation.embedder, texts),
                batch_size=self.batch_size,
                executor=executor,
            )
            while jobs:
                for job, doc in self._claimed(jobs):
                    prepared = self._prepare_job(job, doc, generation, finished)
                    if prepared is not None:
                        self._write_keywords(prepared)
                        stream.add(prepared, [c.content for c in prepared.chunks])
                        finished += self._write_ready(stream.ready())
                jobs = more() if more is not None else []
            stream.flush()
            while stream:
                finished += self._write_ready(stream.ready(wait=True))
        return finished

    def _embed(self, embedder: Embedder | None, texts: list[str]) -> Vectors:
        known = self.known
        if known is not None:
            return known.embed(embedder, texts, self.batch_size)
        return embed_texts(embedder, texts, self.batch_size)

    def _claimed(self, jobs: Sequence[IngestJob]) -> Iterator[tuple[IngestJob, Document]]:
        """The jobs with work to do, each document marked `indexing` first, CLAIM_JOBS at a
        time (one write each, and the first batch's embedding need not wait for them all); a
        job given twice is done once, in the mode it was given last."""
        latest = list({(j.workspace_id, j.document_id, j.revision): j for j in jobs}.values())
        for start in range(0, len(latest), CLAIM_JOBS):
            claimed: list[tuple[IngestJob, Document]] = []
            now = utcnow()
            for job in latest[start : start + CLAIM_JOBS]:
                doc = self.metadata.get_document(job.workspace_id, job.document_id)
                if doc is None or doc.revision != job.revision:
                    continue  # deleted, or superseded by a newer revision's job
                if doc.status is DocumentStatus.COMPLETED:
                    continue  # a re-delivered job for work already done
                doc.start_indexing(now)
                claimed.append((job, doc))
            saved = write_documents(self.metadata, [DocumentWrite(d) for _, d in claimed])
            yield from (c for c, kept in zip(claimed, saved, strict=True) if kept is not None)

    def _prepare_job(
        self,
        job: IngestJob,
        doc: Document,
        generation: EmbeddingGeneration,
        finished: list[Document],
    ) -> _Prepared | None:
        """Parse and chunk the job's document; None when there is nothing (more) to do."""
        try:
            chunks = parse_and_chunk(doc, blobs=self.blobs, metadata=self.metadata, mode=job.mode)
            if self.read_sentences is not None:  # while the last document's chunks embed
                for chunk in chunks:
                    chunk.sentence_terms = self.read_sentences(chunk.content)
            return _Prepared(doc, chunks, generation)
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
        if doc.chunk_count or len(p.chunks) < EARLY_KEYWORD_CHUNKS or p.generation.embedder is None:
            return  # a file with chunks keeps serving them until its new ones are complete
        try:
            p.generation.index.index(entries_for(doc, p.chunks, None))
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
            for target in self._targets(p.doc.workspace_id, p.generation):
                target.index.delete_document(p.doc.workspace_id, p.doc.id)
            self.metadata.replace_chunks(p.doc.workspace_id, p.doc.id, [])
        except _GONE:
            pass  # deleted meanwhile: nothing of it is left to find

    def _write_ready(
        self, ready: list[tuple[_Prepared, Vectors | BaseException]]
    ) -> list[Document]:
        """Write the documents whose vectors are ready; those whose embedding failed fail."""
        finished: list[Document] = []
        done: list[tuple[_Prepared, Vectors]] = []
        logged: set[int] = set()  # a batch's error once, not once a document
        for p, vectors in ready:
            if isinstance(vectors, BaseException):
                if id(vectors) not in logged:
                    logged.add(id(vectors))
                    log.error("embedding failed", exc_info=vectors)
                self._take_back(p)
                finished += self._fail(p.doc, f"embedding: {vectors}")
            else:
                done.append((p, vectors))
        return finished + self._write(done)

    def _write(self, done: list[tuple[_Prepared, Vectors]]) -> list[Document]:
        """Write documents with their vectors together; if that fails, one by one, so a
        document that cannot be written fails alone and the others of the batch finish. A
        document deleted or replaced while it was indexed is left to its newer state."""
        if not done:
            return []
        try:
            return self._write_together(done)
        except Exception as exc:
            if len(done) > 1:
                log.warning("writing %d documents together failed; one by one", len(done))
                return [d for item in done for d in self._write([item])]
            p = done[0][0]
            log.exception("writing the chunks of %s failed", p.doc.path)
            self._take_back(p)
            return self._fail(p.doc, f"could not index {p.doc.name}: {exc}")

    def _write_together(self, done: list[tuple[_Prepared, Vectors]]) -> list[Document]:
        # Inside `steady`: a change of model cannot switch between reading the targets and
        # writing them, so a document written during a rebuild reaches both generations.
        with self.generations.steady():
            # Read once a workspace (two settings reads), not once a document.
            targets = {ws: self._targets(ws) for ws in {p.doc.workspace_id for p, _ in done}}
            finished = self._write_targets(done, targets)
        labelled = {ws for ws, ts in targets.items() if any(t.index.filters_metadata for t in ts)}
        self._relabel_edited([d for d in finished if d.workspace_id in labelled])
        return finished

    def _relabel_edited(self, docs: list[Document]) -> None:
        """The entries just written carry the metadata read when the work began. An edit
        made meanwhile relabelled only the entries that existed then: give these the stored
        metadata too (an engine that resolves metadata from the store needs nothing)."""
        for ws in {d.workspace_id for d in docs}:
            written = {d.id: d for d in docs if d.workspace_id == ws}
            for now in self.metadata.get_documents_by_ids(ws, list(written)):
                was = written[now.id]
                if (now.metadata, now.category) != (was.metadata, was.category):
                    relabel_document_everywhere(self.generations, now)

    def _write_targets(
        self, done: list[tuple[_Prepared, Vectors]], targets: dict[str, list[EmbeddingGeneration]]
    ) -> list[Document]:
        # Index first, metadata last: metadata is the truth, so a crash in between leaves the
        # documents `indexing` (re-queued at start) and entries that the rewrite replaces.
        for target, entries in self._entries(done, targets):
            target.index.index(entries)
        now = utcnow()
        for p, _ in done:
            p.doc.complete(len(p.chunks), now)
        removed = write_documents(self.metadata, [DocumentWrite(p.doc, p.chunks) for p, _ in done])
        finished: list[Document] = []
        for (p, _), stale in zip(done, removed, strict=True):
            if stale is None:
                self._forget(p)
                continue
            if stale:
                for target in targets[p.doc.workspace_id]:
                    target.index.delete_chunks(p.doc.workspace_id, sorted(stale))
            finished.append(p.doc)
        return finished

    def _entries(
        self, done: list[tuple[_Prepared, Vectors]], targets: dict[str, list[EmbeddingGeneration]]
    ) -> list[tuple[EmbeddingGeneration, list]]:
        """Each target generation's entries: the stream's vectors where its model made them, else
        the chunks embedded now by the target's model (a generation being built)."""
        by_model: dict[str, tuple[EmbeddingGeneration, list]] = {}
        for p, vectors in done:
            for target in targets[p.doc.workspace_id]:
                if target.model != p.generation.model:
                    texts = [c.content for c in p.chunks]
                    vectors = embed_texts(target.embedder, texts, self.batch_size)
                entries = entries_for(p.doc, p.chunks, vectors)
                by_model.setdefault(target.model, (target, []))[1].extend(entries)
        return list(by_model.values())

    def _targets(
        self, workspace_id: str, also: EmbeddingGeneration | None = None
    ) -> list[EmbeddingGeneration]:
        """The generations a write reaches now; `also`: one more to delete from (where a job that
        began before a switch wrote its early keyword entries)."""
        targets = write_targets(self.generations, workspace_id)
        if also is not None and all(t.model != also.model for t in targets):
            targets.append(also)
        return targets

    def _forget(self, p: _Prepared) -> None:
        """Remove what this stale job wrote to the index, unless the document still has those
        chunks (a newer revision's job cleans up after itself)."""
        doc = p.doc
        if self.metadata.get_document(doc.workspace_id, doc.id) is None:
            for target in self._targets(doc.workspace_id, p.generation):
                target.index.delete_document(doc.workspace_id, doc.id)
            self.blobs.delete_prefix(f"texts/{doc.workspace_id}/{doc.id}/")
            return
        kept = {c.id for c in self.metadata.get_chunks(doc.workspace_id, doc.id)}
        written = [c.id for c in p.chunks if c.id not in kept]
        if written:
            for target in self._targets(doc.workspace_id, p.generation):
                target.index.delete_chunks(doc.workspace_id, written)

    def _fail(self, doc: Document, message: str) -> list[Document]:
        """Record the failure, unless the document was deleted or replaced meanwhile."""
        doc.fail(message)
        try:
            self.metadata.save_document(doc, if_revision=doc.revision)
        except _GONE:
            return []
        return [doc]

    def reindex(self, workspace_id: str | None = None, **options) -> int:
        """Rebuild from metadata (services/embedding/reindex.py: `reindex_served`). Returns the chunks."""
        return reindex_served(
            self.metadata,
            self.generations,
            self.generations.default,
            workspace_id,
            self.batch_size,
            **options,
        )
