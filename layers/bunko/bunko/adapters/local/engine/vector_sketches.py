"""128-byte int8 sketches of the vector rows, to shortlist a filtered search's rows.

A filtered search ranks its allowed rows exactly when they are few (vector_index). At 10%
of 100k rows that is ~10k float16 rows: gathering 1 KB a row from the memory map and
scanning it cost ~3 ms, most of a filtered hybrid search. A sketch is the row projected
onto SKETCH_DIM fixed orthonormal directions and quantised to int8 (an 8th of the bytes):
the search scores the allowed rows' sketches against the projected query, keeps the best
SHORTLIST_FACTOR × limit (at least the tuning's `shortlist_min`), and ranks only those exactly against the
float16 rows, so the cosines it returns are still exact. Measured on the benchmark's 100k
chunks, 10% filter (~10k rows), per query: exact scan ~3.5 ms, sketches ~1.1 ms (the
shortlist itself; 3.0-3.5 ms while it converted each block to a fresh float32 copy), then
0.6 ms with NumKong's int8 kernels. At 1M chunks the same filter is ~100k rows: the
shortlist took 7.7-8.5 ms with numpy's einsum and a full partition, 3.8 ms now (2.2 ms of
it gathering the rows' sketches, two cache lines each, from wherever they lie).
Recall@10 against the exact scan, by shortlist size: clustered data 0.999 at 400 rows;
near-duplicate data (copies that differ by less than a sketch can see) 0.938 at 400,
0.986 at 1,000, 0.998 at 2,000; ranking the shortlist exactly costs 0.11 / 0.36 / 0.78 ms,
hence at least 1,000. 64 dimensions gave 0.94 on clustered
data; 256 cost 30% more for recall@100 0.987 instead of 0.953 at 800 rows.

The projection is a fixed function of the dimension (a seeded random orthonormal basis),
so it is never stored, only its fingerprint: a snapshot whose sketches were made with another
basis (another NumPy or LAPACK could give one) or saved without sketches gets them computed
from its rows.
"""

from __future__ import annotations

import hashlib
from functools import cache

import numkong as nk
import numpy as np
from threadpoolctl import threadpool_limits

from bunko.adapters.local.engine.tuning import MEASURED
from bunko.adapters.local.engine.vector_rows import VectorRows

SKETCH_DIM = 128
SHORTLIST_FACTOR = 10
BLOCK = 4096  # sketches gathered at a time (512 KB)
SAMPLE = 8192  # scores sampled for the shortlist's floor
# A unit vector's projection onto one direction rarely exceeds 0.25 (~5.6 standard
# deviations at 512 dimensions); beyond it the value saturates.
SCALE = 127 / 0.25
_SEED = 20261201


def wanted(dimension: int) -> bool:
    """Sketches pay only for rows much wider than the sketch."""
    return dimension >= 2 * SKETCH_DIM


@cache
def projection(dimension: int) -> np.ndarray:
    basis = np.random.default_rng(_SEED).standard_normal((dimension, SKETCH_DIM))
    return np.linalg.qr(basis)[0].astype(np.float32)


def basis_id(dimension: int) -> str:
    """A fingerprint of the projection, saved with the sketches made with it."""
    return hashlib.sha256(projection(dimension).tobytes()).hexdigest()[:16]


def sketch(matrix: np.ndarray) -> np.ndarray:
    """int8 sketches of unit row vectors (n × dimension, any float dtype), on batches of
    ~1,000 rows. One BLAS thread: OpenBLAS's others keep spinning after a product, beside
    the graph's own threads (measured: +35% ingest CPU at 50k rows; on one thread, none)."""
    with threadpool_limits(1, user_api="blas"):
        projected = np.asarray(matrix, dtype=np.float32) @ projection(matrix.shape[-1])
    return np.clip(np.rint(projected * SCALE), -127, 127).astype(np.int8)


def shortlist(
    sketches: np.ndarray,
    query: np.ndarray,
    rows: np.ndarray,
    limit: int,
    *,
    minimum: int = MEASURED.shortlist_min,
) -> np.ndarray:
    """The `rows` worth ranking exactly for the best `limit`: all of them when they are
    few, else the best by sketch (max(SHORTLIST_FACTOR × `limit`, `minimum`) of them), plus
    every row past the sketched ones."""
    keep = max(SHORTLIST_FACTOR * limit, minimum)
    inside = rows < len(sketches)
    candidates = rows[inside]
    if len(candidates) <= 2 * keep:
        return rows
    # NumKong's int8 dot kernels (AVX-512 VNNI where the CPU has it), one thread: at 100k
    # allowed rows 0.9 ms against einsum's 3.5 (numpy has no int8 SIMD product), and BLAS
    # would need a float32 copy of every block.
    projected = np.einsum("ij,i->j", projection(len(query)), query.astype(np.float32))
    # The query's sketch scaled to fill int8: ranking does not change with its scale.
    scale = 127.0 / max(float(np.abs(projected).max()), 1e-12)
    packed = nk.dots_pack(np.rint(projected * scale).astype(np.int8)[None, :])
    scores = np.empty(len(candidates), dtype=np.int32)
    block = np.empty((min(BLOCK, len(candidates)), sketches.shape[1]), dtype=np.int8)
    for start in range(0, len(candidates), BLOCK):
        # np.take into one buffer: 2.2 ms for 100k rows against 3.4 by fancy indexing.
        part = block[: min(BLOCK, len(candidates) - start)]
        np.take(sketches, candidates[start : start + BLOCK], axis=0, out=part)
        scores[start : start + len(part)] = np.asarray(nk.dots_packed(part, packed))[:, 0]
    best = np.sort(candidates[_best(scores, keep)])
    return np.concatenate([best, rows[~inside]])


def _best(scores: np.ndarray, keep: int) -> np.ndarray:
    """Positions of the `keep` best scores (in no order). A floor from a spread sample
    first cuts them to about 1.5 × `keep`: partitioning all 100k scores cost 1.6 ms."""
    step = max(1, len(scores) // SAMPLE)
    sample = scores[::step]
    wanted = int(1.5 * keep * len(sample) / len(scores)) + 1
    if wanted < len(sample):
        floor = np.partition(sample, len(sample) - wanted)[len(sample) - wanted]
        above = np.flatnonzero(scores >= floor)
        if len(above) >= keep:
            return above[np.argpartition(-scores[above], keep - 1)[:keep]]
    return np.argpartition(-scores, keep - 1)[:keep]


def sketches_of(rows: VectorRows, count: int) -> VectorRows | None:
    """Sketches of the first `count` rows, in a file beside the rows (a snapshot saved
    before sketches existed gets them here, once: ~0.5 s per 100k rows)."""
    if not wanted(rows.dimension):
        return None
    sketches = VectorRows(rows.path.with_suffix(".sketch"), SKETCH_DIM, dtype=np.int8)
    for start in range(0, count, 65536):
        block = rows.array[start : min(count, start + 65536)]
        sketches.append(sketch(block), len(block))
    return sketches
