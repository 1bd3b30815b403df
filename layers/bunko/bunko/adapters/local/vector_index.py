"""One workspace's vectors: a usearch HNSW graph finds candidates, float16 rows rank them.

Measured at 100k × 512 (tests/bench/bench_index.py, bench_engines.py): numpy brute force
reads all 200 MB of vectors per query; HNSW answers in ~1 ms. The graph stores int8 (half
the build CPU of float16) and is asked for about twice the neighbours needed; those are
re-scored exactly against float16 copies of the vectors, which lifts recall@10 from ~0.91
to ≥ 0.95 and makes the returned cosine exact to ~1e-3.

usearch has no filter predicate in Python, so a filtered search (category, documents) scans
the allowed rows exactly when they are few, else asks the graph for more neighbours and
drops the rest, widening until enough are allowed: a filtered search still returns up to
`limit` hits.

Rows are numbered in the order vectors arrive (graph ids are row numbers) and live in fixed
blocks, so growing never copies them. Entry keys only grow, so `keys` is sorted and a key's
row is a binary search away.
"""

from __future__ import annotations

import math
from array import array
from pathlib import Path

import numpy as np
from usearch.index import Index
from usearch.index import search as exact_search

GRAPH_DTYPE = "i8"
CONNECTIVITY = 16
EXPANSION_ADD = 64
EXPANSION_SEARCH = 128
# Up to this many rows an exact scan takes ~1 ms and beats oversampling the graph.
EXACT_MAX = 2048
COMPACT_MIN = 1024
BLOCK = 4096  # rows per storage block


class VectorIndex:
    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._graph = _new_graph(dimension)
        self._blocks: list[np.ndarray] = []
        self._keys = array("q")  # row → entry key (ascending)
        self._alive = array("b")
        self._live = 0

    def __len__(self) -> int:
        return self._live

    @property
    def removed(self) -> int:
        return len(self._keys) - self._live

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors under entry keys greater than every key added before."""
        n = len(keys)
        if n == 0:
            return
        if len(self._keys) and int(keys[0]) <= self._keys[-1]:
            raise ValueError("entry keys must grow")
        first = len(self._keys)
        while len(self._blocks) * BLOCK < first + n:
            self._blocks.append(np.empty((BLOCK, self.dimension), dtype=np.float16))
        rows = np.arange(first, first + n)
        for block in np.unique(rows // BLOCK).tolist():
            mine = rows[rows // BLOCK == block]
            self._blocks[block][mine % BLOCK] = vectors[mine - first]
        self._keys.frombytes(np.asarray(keys, dtype=np.int64).tobytes())
        self._alive.frombytes(b"\x01" * n)
        self._live += n
        self._graph.add(rows.astype(np.uint64), vectors, threads=0)

    def remove(self, keys: list[int]) -> None:
        rows = self._rows_of(np.asarray(keys, dtype=np.int64))
        if len(rows):
            for row in rows.tolist():
                self._alive[row] = 0
            self._live -= len(rows)
            self._graph.remove(rows.astype(np.uint64))

    def needs_compaction(self) -> bool:
        # Removed nodes stay in the graph as tombstones; once they outnumber the live ones
        # searches wade through them and recall drops, so the graph is rebuilt.
        return self.removed > max(COMPACT_MIN, self._live)

    def compact(self) -> None:
        """Rebuild the graph from the live rows (drops tombstones; costs one rebuild)."""
        live = self._live_rows()
        keys, vectors = np.frombuffer(self._keys, dtype=np.int64)[live].copy(), self._gather(live)
        self.__init__(self.dimension)
        for start in range(0, len(keys), BLOCK):
            self.add(keys[start : start + BLOCK], vectors[start : start + BLOCK])

    def search(
        self, vector: np.ndarray, limit: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Up to `limit` (entry key, cosine similarity), best first; with `allowed`
        (entry keys), only those."""
        if self._live == 0 or limit <= 0:
            return []
        if allowed is None:
            if self._live <= EXACT_MAX:
                return self._exact(vector, self._live_rows(), limit)
            return self._exact(vector, self._candidates(vector, 2 * limit + 20), limit)
        rows = self._rows_of(np.asarray(allowed, dtype=np.int64))
        if len(rows) == 0:
            return []
        # Neighbours to ask for so that about 1.2 x limit of them are expected to be allowed.
        count = min(self._live, math.ceil(1.2 * limit * self._live / len(rows)) + 20)
        if len(rows) <= EXACT_MAX or count * 4 > self._live:
            return self._exact(vector, rows, limit)
        while True:
            found = self._candidates(vector, count)
            kept = found[np.isin(found, rows, assume_unique=True)]
            if len(kept) >= limit or count >= self._live:
                return self._exact(vector, kept, limit)
            count = min(self._live, count * 4)

    def _rows_of(self, keys: np.ndarray) -> np.ndarray:
        """Rows of the live entries among `keys` (others are skipped)."""
        all_keys = np.frombuffer(self._keys, dtype=np.int64)
        if len(all_keys) == 0 or len(keys) == 0:
            return np.empty(0, dtype=np.int64)
        rows = np.minimum(np.searchsorted(all_keys, keys), len(all_keys) - 1)
        ok = (all_keys[rows] == keys) & np.frombuffer(self._alive, dtype=np.bool_)[rows]
        return np.unique(rows[ok])

    def _live_rows(self) -> np.ndarray:
        return np.flatnonzero(np.frombuffer(self._alive, dtype=np.bool_))

    def _gather(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty((len(rows), self.dimension), dtype=np.float16)
        blocks = rows // BLOCK
        for block in np.unique(blocks).tolist():
            mine = blocks == block
            out[mine] = self._blocks[block][rows[mine] % BLOCK]
        return out

    def _candidates(self, vector: np.ndarray, count: int) -> np.ndarray:
        matches = self._graph.search(vector, count, threads=1)
        return np.asarray(matches.keys, dtype=np.int64)

    def _exact(self, vector: np.ndarray, rows: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """Rank `rows` by exact cosine (usearch's SIMD kernels read float16 directly; numpy
        would first convert, at ~10 ns a value)."""
        if len(rows) == 0:
            return []
        found = exact_search(
            self._gather(rows),
            vector.astype(np.float16),
            min(limit, len(rows)),
            "cos",
            exact=True,
            threads=1,
        )
        keys = np.frombuffer(self._keys, dtype=np.int64)
        return [
            (int(keys[rows[i]]), 1.0 - float(d))
            for i, d in zip(found.keys, found.distances, strict=True)
        ]

    # --- persistence: written beside and renamed into place ---

    def save(self, graph_path: Path, rows_path: Path) -> None:
        tmp_graph = graph_path.with_name(graph_path.name + ".tmp")
        self._graph.save(str(tmp_graph))
        tmp_rows = rows_path.with_name(rows_path.name + ".tmp")
        with tmp_rows.open("wb") as out:
            np.save(out, np.frombuffer(self._keys, dtype=np.int64))
            np.save(out, np.frombuffer(self._alive, dtype=np.int8))
            for start in range(0, len(self._keys), BLOCK):  # block by block: no big copy
                out.write(self._blocks[start // BLOCK][: len(self._keys) - start].tobytes())
        tmp_graph.replace(graph_path)
        tmp_rows.replace(rows_path)

    @classmethod
    def restore(cls, graph_path: Path, rows_path: Path, dimension: int) -> VectorIndex | None:
        """The saved index, or None when a file is missing, torn or of another dimension."""
        index = cls(dimension)
        try:
            graph = Index.restore(str(graph_path))
            with rows_path.open("rb") as f:
                keys, alive = np.load(f), np.load(f)
                for start in range(0, len(keys), BLOCK):
                    n = min(BLOCK, len(keys) - start)
                    block = np.empty((BLOCK, dimension), dtype=np.float16)
                    block[:n] = np.fromfile(f, dtype=np.float16, count=n * dimension).reshape(
                        n, dimension
                    )
                    index._blocks.append(block)
        except Exception:  # a torn or foreign file (usearch raises its own types): rebuild
            return None
        if graph is None or graph.ndim != dimension or len(alive) != len(keys):
            return None
        graph.expansion_search = EXPANSION_SEARCH
        index._graph = graph
        index._keys.frombytes(keys.astype(np.int64).tobytes())
        index._alive.frombytes(alive.astype(np.int8).tobytes())
        index._live = int(alive.sum())
        return index


def _new_graph(dimension: int) -> Index:
    return Index(
        ndim=dimension,
        metric="cos",
        dtype=GRAPH_DTYPE,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )
