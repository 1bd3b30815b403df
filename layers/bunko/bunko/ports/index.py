"""The search index: derived from metadata, rebuildable at any time (DESIGN decision 1).

The local adapters must not hide cloud limits (DESIGN decision 2): chunk ids are fields,
deletes go by document or by chunk ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from bunko.domain.metadata import Filter as MetadataFilter


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
    # The document's metadata terms (domain/metadata.terms_of, its category's among them), for
    # an engine that filters by metadata on the entry itself (OpenSearch).
    metadata_terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchFilter:
    """Filters every sub-query applies in the engine, so both engines filter alike."""

    workspace_id: str
    category: str | None = None
    document_ids: frozenset[str] | None = None
    # A metadata filter (domain/metadata.parse_filter); the category above is one more clause.
    metadata: MetadataFilter | None = None


class IndexHit(NamedTuple):
    """A raw engine hit. `score` is engine-native: BM25 for keyword, cosine for vector.
    A named tuple: built 100 times a query leg, in half the time of a frozen dataclass."""

    chunk_id: str
    document_id: str
    score: float


class SearchIndex(Protocol):
    """A derived index (DESIGN decision 1): rebuildable from metadata at any time."""

    dimension: int | None
    # Whether SearchFilter.metadata is applied by the engine itself (on each entry's
    # metadata_terms); False: the search service hands it the passing documents' ids instead.
    filters_metadata: bool

    def index(self, entries: Sequence[IndexEntry]) -> None:
        """Add or replace entries by chunk id (re-indexing the same chunk is idempotent)."""

    def delete_document(self, workspace_id: str, document_id: str) -> None: ...
    def delete_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> None: ...
    def keyword_search(self, query: str, filters: SearchFilter, limit: int) -> list[IndexHit]: ...
    def vector_search(
        self, vector: Sequence[float], filters: SearchFilter, limit: int
    ) -> list[IndexHit]: ...
    def keyword_weight(self, query: str, filters: SearchFilter) -> float:
        """Σ idf over the query's analysed terms with this engine's own statistics (the BM25
        an average-length chunk holding each term once would score; a term in no chunk gets
        the largest idf). A keyword hit's score divided by it is an absolute query-term
        coverage, comparable across queries and corpora; 0.0 when the query has no terms."""

    def hybrid_search(
        self, query: str, vector: Sequence[float] | None, filters: SearchFilter, limit: int
    ) -> tuple[list[IndexHit], list[IndexHit]]:
        """Both sub-queries at once (one round trip where the engine allows it)."""

    def relabel_document(
        self, workspace_id: str, document_id: str, metadata_terms: Sequence[str]
    ) -> None:
        """The document's metadata changed: its entries answer to these terms from now on
        (an engine that resolves metadata through the metadata store does nothing)."""

    def clear(self, workspace_id: str | None = None) -> None: ...
    def count(self, workspace_id: str | None = None) -> int: ...


@runtime_checkable
class OwnIndex(Protocol):
    """An index that is a workspace model's own (AWS: `<deployment index>-m-<config id>`):
    created when the model is chosen, deleted once no workspace serves or builds with it."""

    def ensure_index(self) -> bool:
        """Create it if missing; True if it was created."""

    def drop_index(self) -> None:
        """Delete the whole index (nothing if it is gone already)."""
