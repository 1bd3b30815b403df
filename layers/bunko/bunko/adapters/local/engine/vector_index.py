"""One workspace's vectors: a usearch HNSW graph finds candidates, float16 rows rank them.

Measured at 100k × 512 (tests/bench/bench_index.py): numpy brute force reads all 100 MB of
float16 rows per query; HNSW answers in ~1 ms. The graph stores int8 (half the build CPU of
float16); it is asked for RESCORE_FACTOR × limit + RESCORE_EXTRA neighbours, which are
re-scored exactly against the float16 rows: that lifts recall@10 from ~0.91 to ≥ 0.95 on
clustered data and makes the returned cosine exact to ~1e-3. Near-duplicates share one
graph node (`duplicate_groups`): without that, recall on near-duplicate data stayed under
0.89 whatever the graph's precision, links or search breadth; with it, 0.98.

New rows wait in a pending tail (ranked exactly, with the graph's candidates) and enter the
graph `pending_max` at a time in a background thread, so a per-document write costs no graph
call and the writer goes on with the next documents while the graph grows. The graph, its
groups, sketches and `_in_graph` change only under `_graph_lock`, which a search holds too;
the insert takes it `insert_step` rows at a time and lets a waiting search in between, so a
search during a bulk load waits for a step, not a batch. Graph keys are slots. Deleted rows
stay in the graph and the caller's `allowed` mask drops them like any filter: a delete is a
bit flip (the caller compacts when the dead outnumber the live).

Filters apply before ranking, by the allowed mask: few allowed rows (≤ `exact_max`, or under
`exact_fraction` of the graph) are scanned exactly, shortlisted by int8 sketches
(`vector_sketches`) when many (at 100k, CPU per query: 1% 0.6 ms exact vs 95 ms through
the graph, 10% 5.0 vs 6.4 ms, 20% 8.9 vs 2.5 ms); else the graph is asked for enough
neighbours that about the rescore depth of them is allowed, widening until it is.

A saved graph is opened as a read-only memory map (instant, pages load on demand); the
first write after that loads it into memory (~0.1 s per 100k rows) so it can grow.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
from usearch.index import Index
from usearch.index import search as exact_search

from bunko.adapters.local.engine import vector_sketches as sk
from bunko.adapters.local.engine.duplicate_groups import DuplicateGroups, add_to_graph
from bunko.adapters.local.engine.tuning import MEASURED, EngineTuning
from bunko.adapters.local.engine.vector_rows import VectorRows

log = logging.getLogger(__name__)

GRAPH_DTYPE = "i8"
# The graph's links per node and its breadth when a row is inserted. With 16 and 64, recall
# at 1M clustered rows was 0.84-0.86 whatever the search breadth (up to 2,048, 1,000
# candidates ranked exactly: 8% of the true neighbours were never reached), though 0.98 at
# 200k: nodes linked while the graph was small are not re-linked as it fills. Measured
# on the same 1M rows, built in bulk (recall@10 of 40 candidates ranked exactly, search
# breadth 384): 16/64 0.843, float16 nodes 16/64 0.860, 16/96 0.922, 32/64 0.932,
# 24/96 0.966, 16/128 0.981; 64 raised to 128 from 300k nodes on: 0.915. At 200k, build
# time against 16/64: 24/96 1.65x (recall 0.998 against 0.985), 16/128 1.9x (0.995).
CONNECTIVITY = 24
EXPANSION_ADD = 96
# Search breadth: the graph's candidate list per query (at least the neighbours asked for).
# Measured on the benchmark's clustered data, recall@10 at limit 10: 100k rows 0.945 at
# 128, 0.977 at 256, no measurable cost. At 1M rows, on the 16/64 graph: 0.753 / 0.826 /
# 0.876 at 128 / 256 / 384, no better at 512 (the links limited it); on the 24/96 graph:
# 0.944 / 0.978 / 0.982 / 0.982 at 192 / 256 / 320 / 384, the vector leg at limit 100
# 0.53 / 0.46 / 0.50 / 0.54 ms: 256 at every size.
EXPANSION_SEARCH = 256
RESCORE_FACTOR = 2
RESCORE_EXTRA = 20
GROUP_ROWS_MIN = 100  # rows of near-duplicate groups ranked at least (see _allowed_rows)

# One thread puts rows into graphs, for every workspace: an insert already uses every core.
_GRAPH_WRITER = ThreadPoolExecutor(1, thread_name_prefix="graph")


class VectorIndex:
    def __init__(
        self,
        rows: VectorRows,
        graph: Index | None = None,
        in_graph: int = 0,
        groups: DuplicateGroups | None = None,
        sketches: VectorRows | None = None,
        *,
        tuning: EngineTuning = MEASURED,
    ) -> None:
        self.rows = rows
        self.tuning = tuning
        # Sketches cover the rows in the graph: they are computed as a batch when rows enter it.
        self.sketches = sketches if sketches is not None else sk.sketches_of(rows, in_graph)
        self.dimension = rows.dimension
        self._graph = graph if graph is not None else _new_graph(self.dimension)
        self._in_graph = in_graph  # rows [0, in_graph) are in the graph (if not zero)
        self.groups = groups if groups is not None else DuplicateGroups()
        self._view_path: Path | None = None  # set while the graph is a read-only view
        self.graph_changed = False  # since the last save
        self._graph_file: str | None = None  # the saved graph's file name
        self._groups_file: str | None = None
        self.sketches_computed = False  # at load, from the rows (not yet in a snapshot)
        self._graph_lock = threading.Lock()
        self._searches = 0  # waiting for the graph or in it (guarded by _count_lock)
        self._count_lock = threading.Lock()
        self._inserting: Future | None = None  # the background insert, if one was started

    def add(self, matrix: np.ndarray | None, n: int, *, drain: bool = True) -> None:
        """Append `n` rows (slots) of unit vectors; None: n slots without vectors. The caller
        serialises writes; the rows enter the graph in the background."""
        self.rows.append(matrix, n)
        pending_max = self.tuning.pending_max
        if not drain or self.rows.count - self._in_graph < pending_max:
            return
        running = self._inserting is not None and not self._inserting.done()
        if running and self.rows.count - self._in_graph < self.tuning.pending_limit * pending_max:
            return  # the running insert finishes first; the next one takes these rows
        self._wait_for_insert()
        start, end = self._in_graph, self.rows.count
        # Copied now, while no write can move the rows' map.
        block = np.asarray(self.rows.array[start:end], dtype=np.float32)
        self._inserting = _GRAPH_WRITER.submit(self._insert, start, block)

    def backlog(self, incoming: int = 0) -> list[Future]:
        """The running insert, when `incoming` more rows would make the writer wait for it
        (see `add`): to wait on without the index's lock (`add` raises its failure)."""
        running = self._inserting
        most = self.tuning.pending_limit * self.tuning.pending_max
        full = self.rows.count + incoming - self._in_graph >= most
        return [running] if full and running is not None and not running.done() else []

    def drain(self) -> None:
        """Put every pending row into the graph now (near-duplicates into their groups)."""
        self._wait_for_insert()
        start, end = self._in_graph, self.rows.count
        if end > start:
            self._insert(start, np.asarray(self.rows.array[start:end], dtype=np.float32))

    def _wait_for_insert(self) -> None:
        """Wait for the background insert, raising what it raised."""
        inserting, self._inserting = self._inserting, None
        if inserting is not None:
            inserting.result()

    def _insert(self, start: int, block: np.ndarray) -> None:
        sketches = None if self.sketches is None else sk.sketch(block)
        step_rows = self.tuning.insert_step
        for offset in range(0, len(block), step_rows):
            deadline = time.monotonic() + self.tuning.search_first_seconds
            while self._searches and time.monotonic() < deadline:  # let waiting searches in
                time.sleep(0.0002)
            step, first = block[offset : offset + step_rows], start + offset
            with self._graph_lock:
                if self._view_path is not None:
                    self._graph = Index.restore(str(self._view_path))
                    self._graph.expansion_add = EXPANSION_ADD  # not saved: restore gives 128
                    self._view_path = None
                if self.sketches is not None and sketches is not None:
                    self.sketches.append(sketches[offset : offset + len(step)], len(step))
                add_to_graph(self._graph, self.groups, self.rows.array, first, step)
                self._in_graph = first + len(step)
                self.graph_changed = True  # the groups (saved with the graph) grew

    def search(
        self,
        vector: np.ndarray,
        limit: int,
        allowed: np.ndarray,
        n_allowed: int,
        slots: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """Up to `limit` (slot, cosine similarity), best first, among `allowed` slots
        (`n_allowed` of them; `slots`: their positions, when the caller keeps them)."""
        if n_allowed == 0 or limit <= 0:
            return []
        with self._count_lock:
            self._searches += 1
        try:
            with self._graph_lock:
                return self._search(vector, limit, allowed, n_allowed, slots)
        finally:
            with self._count_lock:
                self._searches -= 1

    def _search(
        self,
        vector: np.ndarray,
        limit: int,
        allowed: np.ndarray,
        n_allowed: int,
        slots: np.ndarray | None,
    ) -> list[tuple[int, float]]:
        in_graph = self._in_graph
        pending = in_graph + np.flatnonzero(allowed[in_graph : self.rows.count])
        in_graph_allowed = n_allowed - len(pending)
        exact_max, exact_fraction = self.tuning.exact_max, self.tuning.exact_fraction
        if in_graph_allowed <= max(exact_max, exact_fraction * in_graph):
            if slots is None:  # finding them costs 0.4 ms at 1M rows
                slots = np.flatnonzero(allowed[: self.rows.count])
            return self._exact(vector, slots, limit)
        depth = RESCORE_FACTOR * limit + RESCORE_EXTRA
        # Neighbours to ask for so that about `depth` of them are expected to be allowed.
        count = min(in_graph, math.ceil(1.1 * depth * in_graph / in_graph_allowed))
        while True:
            kept = self._allowed_rows(self._candidates(vector, count), allowed, depth)
            if len(kept) >= depth or count >= in_graph:
                break
            count = min(in_graph, count * 4)
        return self._exact(vector, np.concatenate([kept, pending]), limit)

    def _allowed_rows(self, found: np.ndarray, allowed: np.ndarray, depth: int) -> np.ndarray:
        """About `depth` allowed rows from the graph's candidates. With near-duplicate
        groups, the best groups in the graph's order (its int8 distances) are expanded
        until max(depth, GROUP_ROWS_MIN) rows, all ranked exactly next: expanding every
        group would rank ~20x the rows. Ranking the representatives exactly first cost a
        pass (0.3 ms at 100k) for recall@10 0.993, against 0.997 this way."""
        if not self.groups.any or not len(found):
            return found[allowed[found]][:depth]
        sizes = np.cumsum(self.groups.sizes(found))
        take = int(np.searchsorted(sizes, max(depth, GROUP_ROWS_MIN))) + 1
        while True:
            rows = self.groups.expand(found[:take])
            rows = rows[allowed[rows]]
            if len(rows) >= depth or take >= len(found):
                return rows
            take *= 2

    def _candidates(self, vector: np.ndarray, count: int) -> np.ndarray:
        self._graph.expansion_search = EXPANSION_SEARCH
        matches = self._graph.search(vector, count, threads=1)
        return np.asarray(matches.keys, dtype=np.int64)

    def _exact(self, vector: np.ndarray, rows: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """Rank `rows` by exact cosine (usearch's SIMD kernels read float16 directly; numpy
        would first convert, at ~10 ns a value)."""
        if len(rows) == 0:
            return []
        if self.sketches is not None:
            minimum = self.tuning.shortlist_min
            rows = sk.shortlist(self.sketches.array, vector, rows, limit, minimum=minimum)
        found = exact_search(
            self.rows.array[rows],
            vector.astype(np.float16),
            min(limit, len(rows)),
            "cos",
            exact=True,
            threads=1,
        )
        slots = rows[np.asarray(found.keys, dtype=np.int64)].tolist()
        cosines = (1.0 - np.asarray(found.distances, dtype=np.float64)).tolist()
        return list(zip(slots, cosines, strict=True))

    # --- persistence ---

    def save(self, directory: Path, new_name) -> dict:
        """Flush the rows and write the graph if it changed; the manifest part for `load`."""
        self.drain()
        self.rows.flush()
        part = {"rows_file": self.rows.path.name, "rows": self.rows.count}
        if self.sketches is not None:
            self.sketches.flush()
            part["sketch_file"] = self.sketches.path.name
            part["sketch_basis"] = sk.basis_id(self.dimension)
        if self.graph_changed or self._graph_file is None:
            name = new_name() + ".usearch"
            tmp = directory / (name + ".tmp")
            self._graph.save(str(tmp))
            tmp.replace(directory / name)
            self._graph_file, self.graph_changed = name, False
            self._groups_file = new_name() + ".groups.npy"
            self.groups.save(directory / self._groups_file)
        return part | {
            "graph_file": self._graph_file,
            "groups_file": self._groups_file,
            "in_graph": self._in_graph,
        }

    def close(self) -> None:
        try:
            self._wait_for_insert()
        except Exception:  # these engines are being dropped; the database has every row
            log.warning("a background graph insert failed", exc_info=True)
        self.rows.close()
        if self.sketches is not None:
            self.sketches.close()

    @staticmethod
    def files(part: dict) -> list[str]:
        sketch = [part["sketch_file"]] if "sketch_file" in part else []
        return [part["rows_file"], part["graph_file"], part["groups_file"], *sketch]

    @classmethod
    def load(
        cls, directory: Path, part: dict, dimension: int, *, tuning: EngineTuning = MEASURED
    ) -> VectorIndex:
        """The index saved as `part`: rows and graph memory-mapped."""
        rows = VectorRows(directory / part["rows_file"], dimension, part["rows"])
        path = directory / part["graph_file"]
        graph = Index.restore(str(path), view=True)
        if graph is None or graph.ndim != dimension:
            raise ValueError("the graph file is torn or of another dimension")
        groups = DuplicateGroups.load(directory / part["groups_file"], part["in_graph"])
        sketches = None
        if sk.wanted(dimension) and part.get("sketch_basis") == sk.basis_id(dimension):
            sketch_path = directory / part["sketch_file"]
            sketches = VectorRows(sketch_path, sk.SKETCH_DIM, part["in_graph"], dtype=np.int8)
        index = cls(rows, graph, part["in_graph"], groups, sketches, tuning=tuning)
        # None given but wanted: computed from the rows just now, to be saved once.
        index.sketches_computed = sketches is None and index.sketches is not None
        index._view_path, index._graph_file = path, part["graph_file"]
        index._groups_file = part["groups_file"]
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
