"""The best slots of a query's dense score array, without ranking every slot it reached.

At 1M chunks a SciFact claim reaches ~200k slots: partitioning all of them took ~1.5 ms
and finding them ~1.4 ms. A floor computed from a sample of the postings first cuts them
to the ~1% worth partitioning.
"""

from __future__ import annotations

import numpy as np

# Postings sampled for a query's score floor.
SAMPLE_POSTINGS = 4096


def best_slots(scores: np.ndarray, slot: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """The best `limit` (slot, score) with score > 0, best first (ties: lower slot first).
    `scores` is dense over slots; `slot` the slots of the postings that scored them."""
    floor = _floor(scores, slot, limit)
    candidates = np.flatnonzero(scores >= floor if floor > 0.0 else scores > 0.0)
    if len(candidates) > limit:
        candidates = candidates[np.argpartition(-scores[candidates], limit - 1)[:limit]]
    best = scores[candidates].astype(np.float32)
    order = np.lexsort((candidates, -best))
    return list(zip(candidates[order].tolist(), best[order].tolist(), strict=True))


def _floor(scores: np.ndarray, slot: np.ndarray, limit: int) -> float:
    """A score that the best `limit` slots all reach: the `limit`-th best among the slots of
    a spread sample of the postings (their scores are final, so the true `limit`-th best
    is at least as high); 0 when the sample has too few slots that scored."""
    # Sorted, then deduplicated by hand: np.unique (hashing, NumPy 2.4) cost ~1 ms here,
    # np.diff with prepend 4x this comparison (its Python-level checks).
    sample = np.sort(slot[:: max(1, len(slot) // SAMPLE_POSTINGS)])
    sampled = scores[sample[np.concatenate(([True], sample[1:] != sample[:-1]))]]
    sampled = sampled[sampled > 0.0]
    if len(sampled) < limit:
        return 0.0
    return float(np.partition(sampled, len(sampled) - limit)[len(sampled) - limit])
