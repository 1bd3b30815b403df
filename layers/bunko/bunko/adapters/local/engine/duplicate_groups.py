"""Near-duplicate vectors share one graph node: the first of them (the representative).

Why: an HNSW graph keeps few links between near-identical vectors (its neighbour heuristic
prefers diverse links), so of 20 copies of an abstract a search reaches a few and the rest
are lost: measured at 100k near-duplicate chunks, recall@10 stayed under 0.89 whatever the
graph's precision (int8, float16), links (16, 32) or search expansion (256). With one node
per group and the group expanded at search time, every copy is ranked exactly; and writing
a copy costs a lookup instead of a graph insertion.

A vector joins a group when its exact cosine to the representative is ≥ DUPLICATE_COSINE.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np
from usearch.index import Index

DUPLICATE_COSINE = 0.98
WINDOW = 64
# Search breadth when looking for a new row's duplicate: at 100k, 8 instead of 16 kept
# recall@10 (clustered 0.980, neardup 0.993) and cost ~10% less ingest CPU.
DUPLICATE_EXPANSION = 8


class DuplicateGroups:
    def __init__(self) -> None:
        self.rep_of = array("q")  # row → its representative row (itself for most)
        self._members: dict[int, list[int]] = {}  # representative → the other rows
        # Representative → its group's size (0 for other rows), grown by doubling: a search
        # sizes ~200 ranked groups, ~0.15 ms as a Python loop over the dictionary.
        self._sizes = np.zeros(1024, dtype=np.int64)

    def extend(self, rows: np.ndarray, reps: np.ndarray) -> None:
        """Record rows (consecutive, from len(self)) and their representatives."""
        assert not len(rows) or rows[0] == len(self.rep_of)
        self.rep_of.frombytes(reps.astype(np.int64).tobytes())
        if len(self.rep_of) > len(self._sizes):
            grown = np.zeros(max(2 * len(self._sizes), len(self.rep_of)), dtype=np.int64)
            grown[: len(self._sizes)] = self._sizes
            self._sizes = grown
        copies = reps != rows
        self._sizes[rows[~copies]] = 1
        np.add.at(self._sizes, reps[copies], 1)
        for row, rep in zip(rows[copies].tolist(), reps[copies].tolist(), strict=True):
            self._members.setdefault(rep, []).append(row)

    def __len__(self) -> int:
        return len(self.rep_of)

    @property
    def any(self) -> bool:
        return bool(self._members)

    def sizes(self, reps: np.ndarray) -> np.ndarray:
        return self._sizes[reps]

    def expand(self, reps: np.ndarray) -> np.ndarray:
        """The rows of the groups of `reps`, group by group."""
        members = self._members
        return np.fromiter(
            (row for r in reps.tolist() for row in (r, *members.get(r, ()))), dtype=np.int64
        )

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as out:
            np.save(out, np.frombuffer(self.rep_of, dtype=np.int64))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, count: int) -> DuplicateGroups:
        groups = cls()
        rep_of = np.load(path)[:count]
        if len(rep_of) != count:
            raise ValueError("the duplicate groups are torn")
        groups.rep_of.frombytes(rep_of.astype(np.int64).tobytes())
        groups._sizes = np.bincount(rep_of, minlength=max(count, 1)).astype(np.int64)
        rows = np.flatnonzero(rep_of != np.arange(count))
        if len(rows):
            order = np.argsort(rep_of[rows], kind="stable")
            reps, members = rep_of[rows][order], rows[order]
            starts = np.flatnonzero(np.r_[True, reps[1:] != reps[:-1]])
            for rep, part in zip(reps[starts].tolist(), np.split(members, starts[1:]), strict=True):
                groups._members[rep] = part.tolist()
        return groups


def add_to_graph(
    graph: Index, groups: DuplicateGroups, rows: np.ndarray, start: int, block: np.ndarray
) -> None:
    """Put rows `start`... (their unit vectors: `block`; every row: `rows`) in the graph,
    but a near-duplicate of a node (or of an earlier row of the block) joins its group
    instead. All-zero rows (no vector) only get a group of their own."""
    end = start + len(block)
    present = np.flatnonzero(np.any(block != 0, axis=1))
    reps = np.arange(start, end, dtype=np.int64)
    if len(present):
        vectors, slots = block[present], present + start
        nearest = _nearest(graph, vectors)
        near = np.asarray(rows[np.maximum(nearest, 0)], dtype=np.float32)
        reps[present] = find_representatives(vectors, slots, nearest, near)
        new = reps[present] == slots
        if new.any():
            graph.add(slots[new].astype(np.uint64), vectors[new], threads=0)
    groups.extend(np.arange(start, end), reps)


def _nearest(graph: Index, vectors: np.ndarray) -> np.ndarray:
    """Each vector's nearest graph node (-1: none), by a narrow search: a missed duplicate
    only costs a graph node."""
    if len(graph) == 0:
        return np.full(len(vectors), -1, dtype=np.int64)
    graph.expansion_search = DUPLICATE_EXPANSION
    found = graph.search(vectors, 1, threads=0)
    if not hasattr(found, "counts"):  # one query gives Matches, not BatchMatches
        return np.asarray(found.keys[:1], dtype=np.int64) if len(found.keys) else np.array([-1])
    keys = np.asarray(found.keys, dtype=np.int64).reshape(len(vectors), -1)[:, 0]
    return np.where(np.asarray(found.counts) > 0, keys, -1)


def find_representatives(
    vectors: np.ndarray, rows: np.ndarray, nearest: np.ndarray, nearest_vectors: np.ndarray
) -> np.ndarray:
    """Each new row's representative: the existing node `nearest` to it (-1: none; its
    vector in `nearest_vectors`) when that is a near-duplicate, else the representative of
    an earlier row of the batch it duplicates, else itself.

    Within the batch a row is compared with the WINDOW rows before it only: copies arrive
    together (a re-chunked file, repeated sections), and a 1,024-row batch against itself
    would cost ~50 ms (5 s per 100k rows) against ~4 ms."""
    reps = rows.copy()
    similar = (nearest >= 0) & (np.einsum("ij,ij->i", vectors, nearest_vectors) >= DUPLICATE_COSINE)
    reps[similar] = nearest[similar]
    # One matrix-vector product a row: numpy's threaded matrix product spins its threads
    # and burned 15-25x the CPU of this on a busy machine.
    for i in np.flatnonzero(~similar).tolist():
        if i == 0:
            continue
        window = vectors[max(0, i - WINDOW) : i] @ vectors[i]
        best = int(np.argmax(window))
        if window[best] >= DUPLICATE_COSINE:
            reps[i] = reps[max(0, i - WINDOW) + best]
    return reps
