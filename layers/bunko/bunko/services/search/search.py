"""SearchService: TelosDB's `search_text`, hybrid and workspace-scoped.

Both engines' hits are fused in the core (`bunko.services.search.fusion`), which ranks them; each
hit's `similarity` is the calibrated, absolute relevance (`bunko.services.search.calibration`), and
`min_score` filters by it here, so REST, MCP and chat refuse alike. Hits are then checked
against the metadata store (DESIGN decision 1): a chunk that is no longer there never comes
back, even from a stale index.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from bunko.domain import Chunk, Document
from bunko.domain.metadata import Filter as MetadataFilter
from bunko.errors import ValidationError
from bunko.ports import (
    Embedder,
    EmbeddingGeneration,
    EmbeddingGenerations,
    MetadataStore,
    SearchFilter,
    SearchIndex,
)
from bunko.services.bounds import SEARCHED_CHARS
from bunko.services.search.calibration import (
    CALIBRATIONS,
    CLAIM_ROWS,
    Calibration,
    calibration_for,
    has_row,
    vector_only_calibration,
)
from bunko.services.search.fusion import (
    FUSION_METHODS,
    FusedHit,
    fuse,
    query_vector_weight,
    vector_weight_for,
)
from bunko.services.search.model_scale import ModelScales
from bunko.services.search.query_scale import QueryScales, text_language
from bunko.services.search.relevance_gate import shown_order, similarities
from bunko.services.search.search_items import SearchItem, materialise

log = logging.getLogger(__name__)


class SearchDefaults(Protocol):
    """A workspace's saved search settings (TelosDB's /settings `limit` and `min_score`)."""

    def search_defaults(self, workspace_id: str) -> tuple[int, float]: ...


# Every door bounds its own text (services/bounds/request_limits.py); this bound holds whatever door
# a query comes through, so no caller can hand the embedder a text that costs the machine.
MAX_QUERY_CHARS = SEARCHED_CHARS
# The best vector candidates whose text says the library's language (per-query scale).
LANGUAGE_SAMPLE = 3


@dataclass(frozen=True)
class SearchOptions:
    # None: the workspace's saved setting, so REST, MCP and chat all search alike.
    limit: int | None = None
    min_score: float | None = None
    group_by_document: bool = True
    category: str | None = None
    document_ids: frozenset[str] | None = None
    metadata: MetadataFilter | None = None  # domain/metadata.parse_filter
    method: str | None = None  # None: the configured default
    # Only documents this source owns: a source's name in the library, `connector:<id>`,
    # or a door's own (`upload`, `agent`, …); resolved by the service's `sources`.
    source: str | None = None


@dataclass
class SearchResult:
    items: list[SearchItem] = field(default_factory=list)
    vector_search_used: bool = False
    method: str = ""
    error: str | None = None

    def to_dict(self) -> dict:
        out: dict = {
            "items": [i.to_dict() for i in self.items],
            "vector_search_used": self.vector_search_used,
        }
        if self.error:
            out["error"] = self.error
        return out


class SearchService:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        generations: EmbeddingGenerations,
        method: str = "convex",
        vector_weight: float | None = None,
        candidates: int = 100,
        limit: int = 5,
        min_score: float = 0.3,
        saved_defaults: SearchDefaults | None = None,
        calibration: Calibration | None = None,
        sources: Callable[[str, str], str] | None = None,
        claim_rows: Mapping[str, Calibration] = CLAIM_ROWS,
    ) -> None:
        """`generations`: the model and index generation that serve each workspace;
        `sources(workspace_id, value)`: the documents' source a `source` filter names
        (services/sources.named_source)."""
        if method not in FUSION_METHODS:
            raise ValueError(f"unknown fusion method {method!r}")
        self.metadata = metadata
        self.generations = generations
        self.method = method
        self.vector_weight = vector_weight  # None: each model's measured weight
        self.candidates = candidates
        self.limit = limit
        self.min_score = min_score
        self.saved_defaults = saved_defaults
        self.calibration = calibration  # fixed by the caller (tests, eval), else the model's
        self.sources = sources
        self.claim_rows = claim_rows  # the rows that judge claims, by model (calibration.py)
        self.scales = ModelScales()  # each unfitted model's cosine scale, measured once
        self.query_scales = QueryScales()  # e5's per-query normalisation (query_scale.py)

    def generation(self, workspace_id: str) -> EmbeddingGeneration:
        """The model and index generation that answer the workspace's searches."""
        return self.generations.serving(workspace_id)

    def calibration_for(
        self, *, vector_used: bool, method: str, embedder: Embedder | None = None
    ) -> Calibration:
        """What turns a fused hit's signals into its similarity (also for corpus search),
        for the model that embedded the query (`embedder`, default: the server's). A model
        without a fitted row is judged on its measured scale (services/search/model_scale.py)."""
        if not vector_used:  # cosines are missing, not 0: coverage alone decides
            return CALIBRATIONS["keyword"]
        embedder = embedder or self.generations.default.embedder
        if embedder is None:
            return CALIBRATIONS["keyword"]
        if self.calibration is not None and method != "vector":
            return self.calibration
        scale = None if has_row(embedder.name) else self.scales.scale_for(embedder)
        if method == "vector":
            return vector_only_calibration(embedder.name, scale)  # no keyword signal by request
        return calibration_for(embedder.name, scale)

    def resolve(self, workspace_id: str, options: SearchOptions) -> SearchOptions:
        """Fill what the caller left out from the workspace's saved settings (else config)."""
        if options.limit is not None and options.min_score is not None:
            return options
        limit, min_score = self.limit, self.min_score
        if self.saved_defaults is not None:
            limit, min_score = self.saved_defaults.search_defaults(workspace_id)
        return replace(
            options,
            limit=limit if options.limit is None else options.limit,
            min_score=min_score if options.min_score is None else options.min_score,
        )

    def query_vector(self, query: str, embedder: Embedder | None = None) -> np.ndarray | None:
        """The query's embedding by `embedder` (default: the server's), or None when there
        is no usable embedder."""
        embedder = embedder or self.generations.default.embedder
        if embedder is None:
            return None
        vector = np.asarray(embedder.embed_query(query), dtype=np.float32)
        return vector if np.any(vector) else None  # an unfitted LSA gives zeros

    def search(self, workspace_id: str, query: str, options: SearchOptions) -> SearchResult:
        """Hybrid search; raises on engine failure (callers that must not fail catch it)."""
        method = options.method or self.method
        if method not in FUSION_METHODS:
            raise ValueError(f"unknown fusion method {method!r}")
        if len(query) > MAX_QUERY_CHARS:
            raise ValidationError(f"a query is at most {MAX_QUERY_CHARS} characters")
        options = self.resolve(workspace_id, options)
        if not query or not query.strip() or options.limit <= 0:
            return SearchResult(method=method)
        generation = self.generation(workspace_id)  # the generation that serves, with its own model
        filters = self._filters(workspace_id, options, generation.index)
        if filters.document_ids is not None and not filters.document_ids:
            return SearchResult(method=method)  # no document passes the filter
        vector = None if method == "keyword" else self.query_vector(query, generation.embedder)
        fetch = max(self.candidates, options.limit * 4)
        keyword_hits, vector_hits = generation.index.hybrid_search(
            "" if method == "vector" else query, vector, filters, fetch
        )
        # The keyword weight only matters when some chunk matched a term.
        weight = self._keyword_weight(generation.index, query, filters) if keyword_hits else 0.0
        calibration = self.calibration_for(
            vector_used=bool(vector_hits), method=method, embedder=generation.embedder
        )
        if vector is not None and vector_hits and self.calibration is None:
            calibration = self.per_query(
                workspace_id, query, generation.embedder, vector, vector_hits, calibration
            )
        vector_weight = query_vector_weight(  # a query whose words the library lacks is
            vector_weight_for(generation.embedder, self.vector_weight),  # ranked by its vectors
            keyword_hits,
            vector_hits,
            weight,
            calibration.scale,
        )
        fused = fuse(
            keyword_hits,
            vector_hits,
            method=method,
            vector_weight=vector_weight,
            keyword_weight=weight,
        )
        items = self._materialise(workspace_id, query, fused, options, calibration)
        return SearchResult(items=items, vector_search_used=bool(vector_hits), method=method)

    def per_query(
        self,
        workspace_id: str,
        query: str,
        embedder: Embedder | None,
        vector: np.ndarray,
        vector_hits: Sequence,
        calibration: Calibration,
    ) -> Calibration:
        """`calibration` on this query's own scale for the library's language, for a model
        normalised per query (services/search/query_scale.py); else unchanged."""
        if embedder is None or not self.query_scales.applies(embedder):
            return calibration
        best = sorted(vector_hits, key=lambda h: -h.score)[:LANGUAGE_SAMPLE]
        text = {
            c.id: c.content
            for c in self.metadata.get_chunks_by_ids(workspace_id, [h.chunk_id for h in best])
        }
        languages = [lang for h in best if (lang := text_language(text.get(h.chunk_id, "")[:2000]))]
        if not languages:
            return calibration
        language = Counter(languages).most_common(1)[0][0]  # a tie: the best hit's
        scale = self.query_scales.scale_for(
            embedder, vector, language, calibration.scale, question=query
        )
        return calibration if scale is None else calibration.on_scale(scale)

    def named_source(self, workspace_id: str, value: str) -> str:
        """The documents' source a `source` filter names (ValidationError for a name that is
        no source here): a door checks it before it answers, a stream before it starts."""
        return self.sources(workspace_id, value) if self.sources is not None else value

    def source_documents(self, workspace_id: str, source: str) -> frozenset[str]:
        """The ids of the documents the source a filter names owns (ValidationError for a
        name that is no source here)."""
        source = self.named_source(workspace_id, source)
        return self.metadata.source_document_ids(workspace_id, source)

    def _filters(
        self, workspace_id: str, options: SearchOptions, index: SearchIndex
    ) -> SearchFilter:
        """The engine's filters. An engine that cannot filter by metadata itself (the local
        one) is handed the documents passing it, from the metadata store's term index: its
        exact filtered scan and filtered graph walk then do the rest."""
        ids, metadata = options.document_ids, options.metadata
        if options.source is not None:
            # a source's documents as the document filter every engine applies
            owned = self.source_documents(workspace_id, options.source)
            ids = owned if ids is None else ids & owned
        if metadata is not None and not index.filters_metadata:
            passing = self.metadata.documents_matching(workspace_id, metadata)
            ids, metadata = (passing if ids is None else ids & passing), None
        return SearchFilter(
            workspace_id=workspace_id,
            category=options.category,
            document_ids=ids,
            metadata=metadata,
        )

    @staticmethod
    def _keyword_weight(index: SearchIndex, query: str, filters: SearchFilter) -> float:
        """The query's Σ idf, or 0 when the engine cannot say (OpenSearch's `_analyze` or
        its counts failed): the hits keep their ranks and the gate its background coverage,
        where the search used to fail whole."""
        try:
            return index.keyword_weight(query, filters)
        except Exception:
            log.warning("keyword weight unavailable; coverage counts as 0", exc_info=True)
            return 0.0

    def _materialise(
        self,
        workspace_id: str,
        query: str,
        fused: Sequence[FusedHit],
        options: SearchOptions,
        calibration: Calibration,
    ) -> list[SearchItem]:
        documents: dict[str, Document | None] = {}
        chunks: dict[str, Chunk] = {}
        similarity = similarities(
            self.metadata,
            workspace_id,
            query,
            fused,
            calibration,
            options.min_score,
            limit=options.limit,
            chunks=chunks,
            documents=documents,
            claim_rows=self.claim_rows,
        )
        return materialise(
            self.metadata,
            workspace_id,
            shown_order(
                [h for h in fused if similarity[h.chunk_id] >= options.min_score], similarity
            ),
            similarity,
            limit=options.limit,
            group_by_document=options.group_by_document,
            documents=documents,
            chunks=chunks,
            metadata_filter=options.metadata,
        )

    def search_safely(self, workspace_id: str, query: str, options: SearchOptions) -> SearchResult:
        """TelosDB's unified response: never raises; `items` is always a list."""
        try:
            return self.search(workspace_id, query, options)
        except Exception as exc:
            log.exception("search failed")
            return SearchResult(error=f"search failed: {exc}")
