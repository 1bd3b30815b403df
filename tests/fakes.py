"""Small in-memory fakes of the ports, for unit tests of services (no SQLite, no index files).

Each keeps its state in plain dicts and lists that a test can read back; none hides a rule
a service owns. The contract suites (tests/contract) prove the real adapters; these only need
to honour the same port signatures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import numpy as np

from bunko.domain import Chunk, Document, Revision, Workspace
from bunko.domain.document_query import DocumentPage, DocumentQuery, arrange
from bunko.domain.metadata import matches, terms_of
from bunko.errors import ConflictError, NotFoundError, StaleError
from bunko.ports import IndexEntry, IndexHit, IngestJob, LibraryTotals, SearchFilter
from bunko.services.embedding import shared_generation


def _copy(record):
    return dataclasses.replace(record)  # callers mutate what they get, stores must not see it


class FakeMetadataStore:
    def __init__(self) -> None:
        self.workspaces: dict[str, Workspace] = {}
        self.documents: dict[str, Document] = {}
        self.revisions: dict[tuple[str, int], Revision] = {}
        self.chunks: dict[str, Chunk] = {}

    def ensure_workspace(self, workspace: Workspace) -> Workspace:
        return self.workspaces.setdefault(workspace.id, workspace)

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        return self.workspaces.get(workspace_id)

    def add_document(self, document: Document) -> None:
        if document.id in self.documents or self.get_document_by_path(
            document.workspace_id, document.path
        ):
            raise ConflictError(f"document {document.path} exists")
        self.documents[document.id] = _copy(document)

    def save_document(self, document: Document, *, if_revision: int | None = None) -> None:
        stored = self.documents.get(document.id)
        if stored is None:
            raise NotFoundError(document.id)
        if if_revision is not None and stored.revision != if_revision:
            raise StaleError(f"{document.id} is at revision {stored.revision}")
        self.documents[document.id] = _copy(document)

    def get_document(self, workspace_id: str, document_id: str) -> Document | None:
        doc = self.documents.get(document_id)
        return _copy(doc) if doc and doc.workspace_id == workspace_id else None

    def get_documents_by_ids(self, workspace_id: str, document_ids) -> list[Document]:
        found = [self.get_document(workspace_id, d) for d in dict.fromkeys(document_ids)]
        return [doc for doc in found if doc is not None]

    def get_document_by_path(self, workspace_id: str, path: str) -> Document | None:
        for doc in self.documents.values():
            if (doc.workspace_id, doc.path) == (workspace_id, path):
                return _copy(doc)
        return None

    def list_documents(
        self, workspace_id: str, *, limit: int, offset: int = 0, category: str | None = None
    ) -> list[Document]:
        docs = [d for d in self.iter_documents(workspace_id) if category in (None, d.category)]
        docs.sort(key=lambda d: d.created_at, reverse=True)
        return docs[offset : offset + limit]

    def find_documents(
        self, workspace_id: str, query: DocumentQuery, *, limit: int, offset: int = 0
    ) -> DocumentPage:
        found = arrange(self.iter_documents(workspace_id), query)
        return DocumentPage(documents=found[offset : offset + limit], total=len(found))

    def count_documents(self, workspace_id: str, *, category: str | None = None) -> int:
        return len(self.list_documents(workspace_id, limit=10**9, category=category))

    def library_totals(self, workspace_id: str) -> LibraryTotals:
        docs = list(self.iter_documents(workspace_id))
        return LibraryTotals(documents=len(docs), bytes=sum(d.size for d in docs))

    def documents_matching(self, workspace_id: str, flt) -> frozenset[str]:
        return frozenset(
            d.id
            for d in self.documents.values()
            if d.workspace_id == workspace_id and matches(flt, terms_of(d.metadata, d.category))
        )

    def list_categories(self, workspace_id: str) -> list[str]:
        return sorted({d.category for d in self.iter_documents(workspace_id) if d.category})

    def delete_document(self, workspace_id: str, document_id: str) -> bool:
        if self.get_document(workspace_id, document_id) is None:
            return False
        del self.documents[document_id]
        self.chunks = {k: c for k, c in self.chunks.items() if c.document_id != document_id}
        self.revisions = {k: r for k, r in self.revisions.items() if k[0] != document_id}
        return True

    def iter_documents(self, workspace_id: str | None = None) -> Iterator[Document]:
        for doc in list(self.documents.values()):
            if workspace_id in (None, doc.workspace_id):
                yield _copy(doc)

    def iter_source_documents(self, workspace_id: str, source: str) -> Iterator[Document]:
        found = [d for d in self.iter_documents(workspace_id) if d.source == source]
        yield from sorted(found, key=lambda d: d.path)

    def source_document_ids(self, workspace_id: str, source: str) -> frozenset[str]:
        return frozenset(d.id for d in self.iter_source_documents(workspace_id, source))

    def add_revision(self, revision: Revision) -> None:
        self.revisions[(revision.document_id, revision.revision)] = revision

    def get_revision(self, workspace_id: str, document_id: str, revision: int) -> Revision | None:
        found = self.revisions.get((document_id, revision))
        return found if found and found.workspace_id == workspace_id else None

    def list_revisions(self, workspace_id: str, document_id: str) -> list[Revision]:
        found = [r for (d, _), r in self.revisions.items() if d == document_id]
        return sorted(
            (r for r in found if r.workspace_id == workspace_id), key=lambda r: r.revision
        )

    def replace_chunks(self, workspace_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        if self.get_document(workspace_id, document_id) is None:  # as both real stores do
            raise NotFoundError(f"document {document_id} not found")
        self.chunks = {k: c for k, c in self.chunks.items() if c.document_id != document_id}
        self.chunks.update({c.id: c for c in chunks})

    def get_chunks(self, workspace_id: str, document_id: str) -> list[Chunk]:
        found = [c for c in self.iter_chunks(workspace_id) if c.document_id == document_id]
        return sorted(found, key=lambda c: c.index)

    def get_chunk(self, workspace_id: str, chunk_id: str) -> Chunk | None:
        chunk = self.chunks.get(chunk_id)
        return chunk if chunk and chunk.workspace_id == workspace_id else None

    def get_chunks_by_ids(self, workspace_id: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [c for i in chunk_ids if (c := self.get_chunk(workspace_id, i)) is not None]

    def save_chunk(self, chunk: Chunk) -> None:
        self.chunks[chunk.id] = chunk

    def delete_chunk(self, workspace_id: str, chunk_id: str) -> bool:
        return self.get_chunk(workspace_id, chunk_id) is not None and bool(
            self.chunks.pop(chunk_id)
        )

    def iter_chunks(self, workspace_id: str | None = None) -> Iterator[Chunk]:
        return iter([c for c in self.chunks.values() if workspace_id in (None, c.workspace_id)])

    def count_chunks(self, workspace_id: str | None = None) -> int:
        return sum(1 for _ in self.iter_chunks(workspace_id))


class FakeBlobStore:
    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        self.blobs[key] = data

    def get(self, key: str) -> bytes:
        if key not in self.blobs:
            raise NotFoundError(key)
        return self.blobs[key]

    def exists(self, key: str) -> bool:
        return key in self.blobs

    def delete(self, key: str) -> None:
        self.blobs.pop(key, None)

    def delete_prefix(self, prefix: str) -> int:
        doomed = [k for k in self.blobs if k.startswith(prefix)]
        for key in doomed:
            del self.blobs[key]
        return len(doomed)


class FakeSearchIndex:
    """Keyword score: how many query words the text holds; vector score: the dot product.
    Entries live apart from metadata, so a test can leave a stale one behind. Filters by
    metadata on the entries' terms, as OpenSearch does."""

    filters_metadata = True

    def __init__(self, dimension: int | None = None) -> None:
        self.dimension = dimension
        self.entries: dict[str, IndexEntry] = {}
        self.searches: list[tuple[str, bool, SearchFilter, int]] = []

    def index(self, entries: Sequence[IndexEntry]) -> None:
        self.entries.update({e.chunk_id: e for e in entries})

    def delete_document(self, workspace_id: str, document_id: str) -> None:
        self._drop(lambda e: (e.workspace_id, e.document_id) == (workspace_id, document_id))

    def delete_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> None:
        doomed = set(chunk_ids)
        self._drop(lambda e: e.workspace_id == workspace_id and e.chunk_id in doomed)

    def _drop(self, doomed) -> None:
        self.entries = {k: e for k, e in self.entries.items() if not doomed(e)}

    def _matching(self, filters: SearchFilter) -> list[IndexEntry]:
        return [
            e
            for e in self.entries.values()
            if e.workspace_id == filters.workspace_id
            and filters.category in (None, e.category)
            and (filters.document_ids is None or e.document_id in filters.document_ids)
            and (filters.metadata is None or matches(filters.metadata, e.metadata_terms))
        ]

    def relabel_document(
        self, workspace_id: str, document_id: str, metadata_terms: Sequence[str]
    ) -> None:
        for key, e in list(self.entries.items()):
            if (e.workspace_id, e.document_id) == (workspace_id, document_id):
                self.entries[key] = dataclasses.replace(e, metadata_terms=tuple(metadata_terms))

    def keyword_search(self, query: str, filters: SearchFilter, limit: int) -> list[IndexHit]:
        words = set(query.lower().split())
        hits = [
            IndexHit(e.chunk_id, e.document_id, float(len(words & set(e.text.lower().split()))))
            for e in self._matching(filters)
        ]
        return sorted((h for h in hits if h.score > 0), key=lambda h: -h.score)[:limit]

    def keyword_weight(self, query: str, filters: SearchFilter) -> float:
        """Each word weighs 1, as it scores: a hit's coverage is its share of the words."""
        return float(len(set(query.lower().split())))

    def vector_search(
        self, vector: Sequence[float], filters: SearchFilter, limit: int
    ) -> list[IndexHit]:
        query = np.asarray(vector, dtype=np.float32)
        hits = [
            IndexHit(e.chunk_id, e.document_id, float(np.dot(query, e.vector)))
            for e in self._matching(filters)
            if e.vector is not None
        ]
        return sorted((h for h in hits if h.score > 0), key=lambda h: -h.score)[:limit]

    def hybrid_search(
        self, query: str, vector: Sequence[float] | None, filters: SearchFilter, limit: int
    ) -> tuple[list[IndexHit], list[IndexHit]]:
        self.searches.append((query, vector is not None, filters, limit))
        keyword = self.keyword_search(query, filters, limit) if query else []
        return keyword, [] if vector is None else self.vector_search(vector, filters, limit)

    def clear(self, workspace_id: str | None = None) -> None:
        self._drop(lambda e: workspace_id in (None, e.workspace_id))

    def count(self, workspace_id: str | None = None) -> int:
        return sum(1 for e in self.entries.values() if workspace_id in (None, e.workspace_id))


class FakeEmbedder:
    """One axis per known word: texts that share words point the same way."""

    name = "fake"

    def __init__(self, vocabulary: Sequence[str]) -> None:
        self.axes = {word: i for i, word in enumerate(vocabulary)}
        self.dimension = len(vocabulary)

    def _embed(self, text: str) -> np.ndarray:
        v = np.zeros(self.dimension, dtype=np.float32)
        for word in text.lower().split():
            if word in self.axes:
                v[self.axes[word]] = 1.0
        norm = np.linalg.norm(v)
        return v / norm if norm else v

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._embed(t) for t in texts]) if texts else np.zeros((0, self.dimension))

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed(text)


class FakeQueue:
    def __init__(self) -> None:
        self.jobs: list[IngestJob] = []

    def enqueue(self, job: IngestJob) -> None:
        self.jobs.append(job)


class FakeSearchDefaults:
    """Saved search settings per workspace (the search service's `SearchDefaults`)."""

    def __init__(self, saved: dict[str, tuple[int, float]], fallback: tuple[int, float]) -> None:
        self.saved = saved
        self.fallback = fallback

    def search_defaults(self, workspace_id: str) -> tuple[int, float]:
        return self.saved.get(workspace_id, self.fallback)


class PipelineWorld:
    """IngestService and IndexingPipeline over the fakes above, sharing one set of stores:
    `submit` queues text files, `take_jobs` hands their jobs to a test."""

    def __init__(
        self, embedder: FakeEmbedder, *, batch_size: int = 64, blobs: FakeBlobStore | None = None
    ) -> None:
        from bunko.domain.ingest_options import IngestDefaults
        from bunko.services.ingest.ingest import IngestService
        from bunko.services.ingest.pipeline import IndexingPipeline
        from bunko.services.ingest.upload_policy import UploadPolicy

        self.embedder = embedder
        self.metadata, self.blobs = FakeMetadataStore(), blobs or FakeBlobStore()
        self.index, self.queue = FakeSearchIndex(embedder.dimension), FakeQueue()
        self.ingest = IngestService(
            metadata=self.metadata, blobs=self.blobs, queue=self.queue,
            generations=shared_generation(self.index, None),
            defaults=IngestDefaults(chunk_size=40, chunk_overlap=0),
            policy=UploadPolicy(max_file_bytes=10_000_000),
        )  # fmt: skip
        self.pipeline = IndexingPipeline(
            metadata=self.metadata, blobs=self.blobs, generations=shared_generation(self.index, embedder),
            batch_size=batch_size,
        )  # fmt: skip

    def take_jobs(self) -> list[IngestJob]:
        jobs, self.queue.jobs = self.queue.jobs, []
        return jobs
