"""One workspace's in-memory search state: slot columns, keyword and vector engines (their
snapshot on disk: `workspace_snapshots`).

Every entry gets a slot (its position in every per-slot array, keyword postings and vector
rows alike); a replaced or deleted entry's slot turns dead and stays until compaction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import NamedTuple

import numpy as np

from bunko.adapters.local.engine.keyword_index import KeywordIndex
from bunko.adapters.local.engine.slot_columns import SlotColumns
from bunko.adapters.local.engine.tuning import MEASURED, EngineTuning
from bunko.adapters.local.engine.vector_index import VectorIndex
from bunko.adapters.local.engine.vector_rows import VectorRows
from bunko.domain.keyword_analysis import QueryTerm
from bunko.ports import IndexHit, SearchFilter

# Dead slots are dropped (the workspace rebuilt) once they outnumber the live ones.
COMPACT_MIN = 1024
# Runs hybrid searches' vector legs: one thread, as the index's lock admits one search at
# a time (and usearch searches from two threads at once slow each other down, measured).
_VECTOR_LEG = ThreadPoolExecutor(1, thread_name_prefix="vector-leg")
MASKS_KEPT = 8  # filters whose masks are kept between changes


class Allowed(NamedTuple):
    """A filter's slots: `slots` (None: every live one), those with vectors, their count and,
    for a filter, their positions (a filtered vector search may scan them)."""

    slots: np.ndarray | None
    with_vectors: np.ndarray
    count: int
    positions: np.ndarray | None


class Added(NamedTuple):
    """A committed entry as the engines take it."""

    key: int
    chunk_id: str
    document_id: str
    category: str | None
    terms: list[str]
    vector: np.ndarray | None  # unit length, float16 or float32


class WorkspaceEngines:
    def __init__(
        self, workspace_id: str, directory: Path, *, tuning: EngineTuning = MEASURED
    ) -> None:
        self.workspace_id = workspace_id
        self.directory = directory
        self.tuning = tuning
        self.columns = SlotColumns()
        self.keyword = KeywordIndex(pending_postings=tuning.pending_postings)
        self.vectors: VectorIndex | None = None
        self.seq = 0  # the store's change counter this state matches
        self.max_key = 0
        self.dirty_since: float | None = None  # first change since the last save
        self.next_name = 0  # the last file stem handed out
        self._masks: dict[tuple, Allowed] = {}
        self._masks_lock = threading.Lock()

    # --- changes ---

    def add(self, entries: Sequence[Added], dimension: int | None, *, drain: bool = True) -> None:
        if not entries:
            return
        first = len(self.columns)
        self.keyword.add_many(first, [e.terms for e in entries])
        for e in entries:
            self.columns.append(e.key, e.chunk_id, e.document_id, e.category, e.vector is not None)
        self.max_key = entries[-1].key
        with_vectors = [i for i, e in enumerate(entries) if e.vector is not None]
        if self.vectors is None and with_vectors:
            assert dimension is not None
            rows = VectorRows(self.directory / (self.new_name() + ".rows"), dimension)
            self.vectors = VectorIndex(rows, tuning=self.tuning)
            self.vectors.add(None, first)  # earlier slots had no vectors
        if self.vectors is not None:
            matrix = None
            if with_vectors:
                matrix = np.zeros((len(entries), self.vectors.dimension), dtype=np.float16)
                matrix[with_vectors] = np.stack([entries[i].vector for i in with_vectors])
            self.vectors.add(matrix, len(entries), drain=drain)
        self._changed()

    def remove(self, keys: list[int]) -> None:
        for slot in self.columns.slots_of(keys):
            self.columns.kill(slot)
            self.keyword.remove(slot)
        self._changed()

    def _changed(self) -> None:
        self._masks.clear()
        self.dirty_since = self.dirty_since or time.monotonic()

    def needs_compaction(self) -> bool:
        return self.columns.dead > max(COMPACT_MIN, len(self.columns) - self.columns.dead)

    # --- reads ---

    def keyword_search(
        self, terms: list[QueryTerm], filters: SearchFilter, limit: int
    ) -> list[IndexHit]:
        live = self.columns.live_mask()
        hits = self.keyword.search(terms, live, limit, self._allowed(filters).slots)
        return self.hits(hits)

    def keyword_weight(self, terms: list[QueryTerm]) -> float:
        return self.keyword.query_weight(terms, self.columns.live_mask())

    def vector_search(self, query: np.ndarray, filters: SearchFilter, limit: int) -> list[IndexHit]:
        if self.vectors is None:
            return []
        allowed = self._allowed(filters)
        hits = self.vectors.search(
            query, limit, allowed.with_vectors, allowed.count, allowed.positions
        )
        return self.hits(hits)

    def hybrid_search(
        self, terms: list[QueryTerm], query: np.ndarray | None, filters: SearchFilter, limit: int
    ) -> tuple[list[IndexHit], list[IndexHit]]:
        """Both legs, the vector leg in another thread while this one ranks keywords: the
        graph and numpy release the GIL for part of their work (measured at 100k, hybrid
        p50 ~0.8x the sum of the legs, for 7-12% more CPU)."""
        if query is None or not terms:
            keyword = self.keyword_search(terms, filters, limit) if terms else []
            return keyword, [] if query is None else self.vector_search(query, filters, limit)
        semantic = _VECTOR_LEG.submit(self.vector_search, query, filters, limit)
        try:
            keyword = self.keyword_search(terms, filters, limit)
        except BaseException:
            wait([semantic])  # the vector leg never outlives the caller's lock
            raise
        return keyword, semantic.result()

    def _allowed(self, filters: SearchFilter) -> Allowed:
        """The filter's slots, kept until the next change: a hybrid search's two legs and a
        user paging through one category ask again (at 1M slots, ~3 ms of mask work a
        query)."""
        key = (filters.category, filters.document_ids)
        with self._masks_lock:  # a hybrid search's legs ask at once, from two threads
            found = self._masks.get(key)
            if found is None:
                if len(self._masks) >= MASKS_KEPT:
                    self._masks.clear()
                allowed = self.columns.allowed_mask(filters)
                with_vectors = self.columns.vector_mask()
                positions = None
                if allowed is not None:
                    with_vectors &= allowed
                    positions = np.flatnonzero(with_vectors)
                count = int(with_vectors.sum())
                found = self._masks[key] = Allowed(allowed, with_vectors, count, positions)
            return found

    def hits(self, found: list[tuple[int, float]]) -> list[IndexHit]:
        chunk_ids, documents = self.columns.chunk_ids, self.columns.documents
        names = self.columns.document_names
        return [IndexHit(chunk_ids[slot], names[documents[slot]], score) for slot, score in found]

    def new_name(self) -> str:
        """A fresh file stem in the workspace's folder (saved files are never rewritten)."""
        self.next_name += 1
        return f"{self.next_name:08d}"

    def close(self) -> None:
        if self.vectors is not None:
            self.vectors.close()
