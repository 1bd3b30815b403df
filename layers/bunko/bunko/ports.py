"""The ports: what services need from the outside world, as Protocols.

Services depend on these only; adapters in `bunko.adapters.local` and `bunko.adapters.aws`
implement them. The local adapters must not hide cloud limits (DESIGN decision 2): chunk ids
are fields, deletes go by document or by chunk ids, large text lives in blobs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from bunko.domain import Chunk, Document, Revision, Workspace


class MetadataStore(Protocol):
    """The source of truth for workspaces, documents, revisions and chunks."""

    # workspaces
    def ensure_workspace(self, workspace: Workspace) -> Workspace: ...
    def get_workspace(self, workspace_id: str) -> Workspace | None: ...

    # documents
    def add_document(self, document: Document) -> None:
        """Insert; raises ConflictError if the path or id already exists in the workspace."""

    def save_document(self, document: Document) -> None:
        """Update an existing document (every field but id and workspace_id)."""

    def get_document(self, workspace_id: str, document_id: str) -> Document | None: ...
    def get_document_by_path(self, workspace_id: str, path: str) -> Document | None: ...
    def list_documents(
        self, workspace_id: str, *, limit: int, offset: int = 0, category: str | None = None
    ) -> list[Document]:
        """Newest first."""

    def count_documents(self, workspace_id: str, *, category: str | None = None) -> int: ...
    def list_categories(self, workspace_id: str) -> list[str]: ...
    def delete_document(self, workspace_id: str, document_id: str) -> bool:
        """Delete the document, its revisions and its chunks; False if it was not there."""

    def iter_documents(self, workspace_id: str | None = None) -> Iterator[Document]: ...

    # revisions
    def add_revision(self, revision: Revision) -> None: ...
    def get_revision(
        self, workspace_id: str, document_id: str, revision: int
    ) -> Revision | None: ...
    def list_revisions(self, workspace_id: str, document_id: str) -> list[Revision]: ...

    # chunks (of a document's current revision)
    def replace_chunks(self, workspace_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        """Atomically make `chunks` the document's chunks (idempotent for the same ids)."""

    def get_chunks(self, workspace_id: str, document_id: str) -> list[Chunk]: ...
    def get_chunk(self, workspace_id: str, chunk_id: str) -> Chunk | None: ...
    def get_chunks_by_ids(self, workspace_id: str, chunk_ids: Sequence[str]) -> list[Chunk]: ...
    def save_chunk(self, chunk: Chunk) -> None: ...
    def delete_chunk(self, workspace_id: str, chunk_id: str) -> bool: ...
    def iter_chunks(self, workspace_id: str | None = None) -> Iterator[Chunk]: ...
    def count_chunks(self, workspace_id: str | None = None) -> int: ...


class BlobStore(Protocol):
    """Original files and extracted text. Keys are relative, '/'-separated."""

    def put(self, key: str, data: bytes, *, content_type: str | None = None) -> None: ...
    def get(self, key: str) -> bytes:
        """Raises NotFoundError."""

    def exists(self, key: str) -> bool: ...
    def delete(self, key: str) -> None: ...
    def delete_prefix(self, prefix: str) -> int: ...


@dataclass(frozen=True)
class IndexEntry:
    """One chunk as the search index stores it."""

    chunk_id: str
    document_id: str
    workspace_id: str
    revision: int
    text: str
    category: str | None = None
    vector: Sequence[float] | None = None


@dataclass(frozen=True)
class SearchFilter:
    """Filters every sub-query applies in the engine, so both engines filter alike."""

    workspace_id: str
    category: str | None = None
    document_ids: frozenset[str] | None = None


@dataclass(frozen=True)
class IndexHit:
    """A raw engine hit. `score` is engine-native: BM25 for keyword, cosine for vector."""

    chunk_id: str
    document_id: str
    score: float


class SearchIndex(Protocol):
    """A derived index (DESIGN decision 1): rebuildable from metadata at any time."""

    dimension: int | None

    def index(self, entries: Sequence[IndexEntry]) -> None:
        """Add or replace entries by chunk id (re-indexing the same chunk is idempotent)."""

    def delete_document(self, workspace_id: str, document_id: str) -> None: ...
    def delete_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> None: ...
    def keyword_search(self, query: str, filters: SearchFilter, limit: int) -> list[IndexHit]: ...
    def vector_search(
        self, vector: Sequence[float], filters: SearchFilter, limit: int
    ) -> list[IndexHit]: ...
    def hybrid_search(
        self, query: str, vector: Sequence[float] | None, filters: SearchFilter, limit: int
    ) -> tuple[list[IndexHit], list[IndexHit]]:
        """Both sub-queries at once (one round trip where the engine allows it)."""

    def clear(self, workspace_id: str | None = None) -> None: ...
    def count(self, workspace_id: str | None = None) -> int: ...


@runtime_checkable
class Embedder(Protocol):
    """Text → L2-normalised float32 vectors. Batches internally."""

    name: str
    dimension: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dimension)."""

    def embed_query(self, text: str) -> np.ndarray:
        """Shape (dimension,)."""


@runtime_checkable
class TrainableEmbedder(Embedder, Protocol):
    """An embedder fitted on the corpus itself (LSA); `lsa_retrain` calls `fit`."""

    @property
    def is_fitted(self) -> bool: ...
    def fit(self, texts: Sequence[str]) -> None: ...


@dataclass(frozen=True)
class IngestJob:
    workspace_id: str
    document_id: str
    revision: int


class IngestQueue(Protocol):
    def enqueue(self, job: IngestJob) -> None: ...
