"""One workspace's in-memory search state: its entries as dense slots, and both engines.

A slot is an entry's position in this workspace's arrays; keeping per-slot columns (live,
has a vector, category, document) as flat arrays lets every filter become one numpy mask
that both the keyword and the vector search apply inside their own scoring, so a filtered
search still returns up to `limit` hits. Replaced and deleted entries leave dead slots
behind until `needs_compaction` says the keyword index should be rebuilt.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from bunko.adapters.local.keyword_index import KeywordIndex
from bunko.adapters.local.vector_index import VectorIndex
from bunko.ports import IndexHit, SearchFilter

if TYPE_CHECKING:
    from bunko.adapters.local.index_store import IndexStore, NewRow, Row


class _Entry(NamedTuple):
    """A new entry as `_append_all` needs it (the fields it shares with index_store.Row)."""

    key: int
    chunk_id: str
    document_id: str
    category: str | None
    terms: str
    has_vector: bool


class WorkspaceEngines:
    def __init__(self, workspace_id: str) -> None:
        self.workspace_id = workspace_id
        self.vectors: VectorIndex | None = None
        self.dirty_since: float | None = None  # first unsaved change to the vector graph
        self._reset()

    def _reset(self) -> None:
        self.keyword = KeywordIndex()
        self.slot_of: dict[int, int] = {}  # entry key → slot
        self._keys = array("q")
        self._chunk_ids: list[str] = []
        self._document_ids: list[str] = []
        self._live = array("b")
        self._has_vector = array("b")
        self._categories = array("i")
        self._documents = array("i")
        self._category_codes: dict[str | None, int] = {}
        self._document_codes: dict[str, int] = {}
        self._dead = 0

    def rebuild_keywords(self, store: IndexStore) -> None:
        """(Re)load every live entry from the store, dropping dead slots."""
        self._reset()
        batch: list[Row] = []
        for row in store.rows(self.workspace_id):
            batch.append(row)
            if len(batch) == 8192:
                self._append_all(batch)
                batch = []
        self._append_all(batch)

    def replace(
        self, old: Sequence[Row], keys: Sequence[int], rows: Sequence[NewRow], dimension: int | None
    ) -> None:
        """Mirror a committed change: `old` entries went away, `rows` arrived as `keys`."""
        gone_vectors = []
        for row in old:
            slot = self.slot_of.pop(row.key, None)
            if slot is None:
                continue
            self._live[slot] = 0
            self._dead += 1
            self.keyword.remove(slot, row.terms.split())
            if row.has_vector:
                gone_vectors.append(row.key)
        if gone_vectors and self.vectors is not None:
            self.vectors.remove(gone_vectors)
        added = [(k, r) for k, r in zip(keys, rows, strict=True) if r.vector is not None]
        self._append_all(
            [
                _Entry(
                    key,
                    row.chunk_id,
                    row.document_id,
                    row.category,
                    row.terms,
                    row.vector is not None,
                )
                for key, row in zip(keys, rows, strict=True)
            ]
        )
        if added:
            if self.vectors is None:
                assert dimension is not None
                self.vectors = VectorIndex(dimension)
            self.vectors.add(
                np.asarray([k for k, _ in added], dtype=np.uint64),
                np.stack([r.vector for _, r in added]),
            )
        if added or gone_vectors:
            self.dirty_since = self.dirty_since or time.monotonic()

    def _append_all(self, entries: Sequence[Row | _Entry]) -> None:
        first = len(self._keys)
        self.keyword.add_many(first, [e.terms.split() for e in entries])
        categories, documents = self._category_codes, self._document_codes
        for slot, e in enumerate(entries, start=first):
            self.slot_of[e.key] = slot
            self._keys.append(e.key)
            self._chunk_ids.append(e.chunk_id)
            self._document_ids.append(e.document_id)
            self._live.append(1)
            self._has_vector.append(1 if e.has_vector else 0)
            self._categories.append(categories.setdefault(e.category, len(categories)))
            self._documents.append(documents.setdefault(e.document_id, len(documents)))

    def needs_compaction(self) -> bool:
        return self._dead > max(1024, len(self.slot_of))

    def allowed_mask(self, filters: SearchFilter) -> np.ndarray:
        """Per slot: live and passing the category and document filters."""
        mask = np.frombuffer(self._live, dtype=np.bool_).copy()
        if filters.category is not None:
            code = self._category_codes.get(filters.category, -1)
            mask &= np.frombuffer(self._categories, dtype=np.int32) == code
        if filters.document_ids is not None:
            codes = [
                self._document_codes[d] for d in filters.document_ids if d in self._document_codes
            ]
            mask &= np.isin(np.frombuffer(self._documents, dtype=np.int32), codes)
        return mask

    def allowed_vector_keys(self, filters: SearchFilter) -> np.ndarray | None:
        """Sorted keys the vector search may return, or None when only the workspace filters
        (the whole graph is this workspace's)."""
        if filters.category is None and filters.document_ids is None:
            return None
        mask = self.allowed_mask(filters) & np.frombuffer(self._has_vector, dtype=np.bool_)
        return np.frombuffer(self._keys, dtype=np.int64)[mask].astype(np.uint64)

    def hit(self, slot: int, score: float) -> IndexHit:
        return IndexHit(
            chunk_id=self._chunk_ids[slot], document_id=self._document_ids[slot], score=score
        )
