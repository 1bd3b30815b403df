"""The metadata store: the source of truth (DESIGN decision 1), split along its seams.

Services that need one seam take that Protocol; `MetadataStore` is all of them, which is what
each backend's adapter implements.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from bunko.domain import Chunk, Document, Revision, Workspace
    from bunko.domain.document_query import DocumentPage, DocumentQuery
    from bunko.domain.metadata import Filter as MetadataFilter


@dataclass(frozen=True)
class LibraryTotals:
    documents: int
    bytes: int


class WorkspaceStore(Protocol):
    def ensure_workspace(self, workspace: Workspace) -> Workspace: ...
    def get_workspace(self, workspace_id: str) -> Workspace | None: ...


class DocumentStore(Protocol):
    """Documents and their revisions."""

    def add_document(self, document: Document) -> None:
        """Insert; raises ConflictError if the path or id already exists in the workspace."""

    def save_document(self, document: Document, *, if_revision: int | None = None) -> None:
        """Update an existing document (every field but id and workspace_id). With
        `if_revision`, only while the stored revision is that one, else StaleError."""

    def get_document(self, workspace_id: str, document_id: str) -> Document | None: ...
    def get_documents_by_ids(
        self, workspace_id: str, document_ids: Sequence[str]
    ) -> list[Document]:
        """Each asked document once, in the order asked; missing ids (or another
        workspace's) are left out. One round trip, where a search would make one a hit."""

    def get_document_by_path(self, workspace_id: str, path: str) -> Document | None: ...
    def list_documents(
        self, workspace_id: str, *, limit: int, offset: int = 0, category: str | None = None
    ) -> list[Document]:
        """Newest first."""

    def find_documents(
        self, workspace_id: str, query: DocumentQuery, *, limit: int, offset: int = 0
    ) -> DocumentPage:
        """One page of the documents whose name or path holds `query.name` (any case), in
        `query`'s order, and how many match in all (a library page of thousands)."""

    def count_documents(self, workspace_id: str, *, category: str | None = None) -> int: ...
    def library_totals(self, workspace_id: str) -> LibraryTotals:
        """How many documents the workspace holds and their bytes (each at its current
        revision's size): what listings and the storage quota read, without reading the
        documents (DynamoDB keeps them as counters beside the documents)."""

    def documents_matching(self, workspace_id: str, flt: MetadataFilter) -> frozenset[str]:
        """The ids of the workspace's documents whose metadata passes `flt`."""

    def list_categories(self, workspace_id: str) -> list[str]: ...
    def delete_document(self, workspace_id: str, document_id: str) -> bool:
        """Delete the document, its revisions and its chunks; False if it was not there."""

    def iter_documents(self, workspace_id: str | None = None) -> Iterator[Document]: ...
    def iter_source_documents(self, workspace_id: str, source: str) -> Iterator[Document]:
        """The workspace's documents `source` owns (domain/sources.py), by path: what a
        mirror compares with what the source sees."""

    def source_document_ids(self, workspace_id: str, source: str) -> frozenset[str]:
        """The ids of the workspace's documents `source` owns (a search's `source` filter),
        without reading the documents."""

    # revisions
    def add_revision(self, revision: Revision) -> None: ...
    def get_revision(
        self, workspace_id: str, document_id: str, revision: int
    ) -> Revision | None: ...
    def list_revisions(self, workspace_id: str, document_id: str) -> list[Revision]: ...


class ChunkStore(Protocol):
    """Chunks of each document's current revision."""

    def replace_chunks(self, workspace_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        """Atomically make `chunks` the document's chunks (idempotent for the same ids)."""

    def get_chunks(self, workspace_id: str, document_id: str) -> list[Chunk]: ...
    def get_chunk(self, workspace_id: str, chunk_id: str) -> Chunk | None: ...
    def get_chunks_by_ids(self, workspace_id: str, chunk_ids: Sequence[str]) -> list[Chunk]: ...
    def save_chunk(self, chunk: Chunk) -> None: ...
    def delete_chunk(self, workspace_id: str, chunk_id: str) -> bool: ...
    def iter_chunks(self, workspace_id: str | None = None) -> Iterator[Chunk]: ...
    def count_chunks(self, workspace_id: str | None = None) -> int: ...


class MetadataStore(WorkspaceStore, DocumentStore, ChunkStore, Protocol):
    """Workspaces, documents, revisions and chunks: what each backend's store implements."""


@dataclass(frozen=True)
class DocumentWrite:
    """Save `document` at its revision and, unless None, make `chunks` its chunks."""

    document: Document
    chunks: Sequence[Chunk] | None = None


@runtime_checkable
class DocumentWrites(Protocol):
    """What a store may add for the ingest pipeline, which writes a group of documents at once
    (`services.document_writes` does the same one document at a time for a store without it)."""

    def write_documents(self, writes: Sequence[DocumentWrite]) -> list[list[str] | None]:
        """In one transaction, each write whose document still exists at its revision: its
        chunks replaced (when given) and the document saved. Returns, per write, the ids of
        the chunks it removed, or None when the document was deleted or has a newer revision
        (nothing of that write is kept)."""
