"""The engine's scoring shortcuts score as the plain way does: a filtered search scores only
what its filter allows (the keyword leg's narrow-filter path, the sketches' shortlist floor),
and postings carry their chunk's length (a snapshot saved before they did still opens)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bunko.adapters.local.engine import EngineTuning, vector_sketches
from bunko.adapters.local.engine.keyword_index import COMPRESS_BELOW, KeywordIndex
from bunko.domain.keyword_analysis import QueryTerm


def random_index(
    rng: np.random.Generator, *, words: int, longest: int, chunks: int, per_call: int
) -> tuple[list[list[str]], KeywordIndex]:
    """Chunks of random words, written `per_call` at a time (segments and merges)."""
    vocabulary = [f"w{i}" for i in range(words)]
    docs = [list(rng.choice(vocabulary, size=int(rng.integers(1, longest)))) for _ in range(chunks)]
    index = KeywordIndex()
    for start in range(0, chunks, per_call):
        index.add_many(start, docs[start : start + per_call])
    return docs, index


# Under COMPRESS_BELOW a filter's postings are scored alone; over it, all are, masked.
@pytest.mark.parametrize("share", [0.01, 0.1, 0.5, 0.9])
def test_a_filter_of_any_width_keeps_the_unfiltered_scores_of_its_slots(share: float):
    assert min(0.01, 0.1, 0.5) < COMPRESS_BELOW < 0.9  # both paths are exercised
    rng = np.random.default_rng(int(share * 100))
    docs, index = random_index(rng, words=30, longest=20, chunks=3000, per_call=17)
    live = np.ones(len(docs), dtype=bool)
    for slot in rng.choice(len(docs), size=200, replace=False).tolist():
        index.remove(slot)  # dead slots: kept out of the statistics and of the results
        live[slot] = False
    allowed = live & (rng.random(len(docs)) < share)
    query = [QueryTerm(t) for t in ("w1", "w2", "w17")]
    everything = dict(index.search(query, live, len(docs)))
    filtered = index.search(query, live, 50, allowed)
    expected = sorted(
        ((s, v) for s, v in everything.items() if allowed[s]), key=lambda h: (-h[1], h[0])
    )[:50]
    assert [s for s, _ in filtered] == [s for s, _ in expected]
    assert [v for _, v in filtered] == pytest.approx([v for _, v in expected], rel=1e-6)


def test_a_filter_that_allows_none_of_the_matches_finds_nothing():
    index = KeywordIndex()
    index.add_many(0, [["a"], ["b"]] * 50)
    live = np.ones(100, dtype=bool)
    allowed = np.zeros(100, dtype=bool)
    allowed[1::2] = True  # only the "b" chunks
    assert index.search([QueryTerm("a")], live, 10, allowed) == []


@pytest.mark.parametrize("seed", range(5))
def test_the_shortlist_floor_keeps_exactly_the_best_scores(seed: int):
    rng = np.random.default_rng(seed)
    scores = rng.integers(-500, 500, size=int(rng.integers(3000, 200_000))).astype(np.int32)
    keep = int(rng.integers(1, 2000))
    best = vector_sketches._best(scores, keep)
    assert len(best) == len(set(best.tolist())) == keep
    # Ties at the boundary may pick either row; the scores kept are the best ones.
    assert sorted(scores[best].tolist()) == sorted(np.sort(scores)[-keep:].tolist())


def test_the_shortlist_ranks_by_the_sketch_dot_product():
    rng = np.random.default_rng(7)
    dimension = 512
    vectors = rng.standard_normal((20_000, dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sketches = vector_sketches.sketch(vectors)
    query = vectors[124] + 0.05 * rng.standard_normal(dimension).astype(np.float32)
    rows = np.arange(0, 20_000, 2)  # a filter: every other row
    kept = vector_sketches.shortlist(sketches, query, rows, 10)
    keep = max(vector_sketches.SHORTLIST_FACTOR * 10, EngineTuning().shortlist_min)
    assert len(kept) == keep and set(kept.tolist()) <= set(rows.tolist())  # allowed only
    assert 124 in kept.tolist()  # the row the query is a near copy of
    # The rows kept are (nearly all) the best by a float product with the sketches (the
    # query's sketch is rounded to int8).
    projected = vector_sketches.projection(dimension).T @ query
    reference = rows[np.argsort(-(sketches[rows].astype(np.float32) @ projected))[:keep]]
    assert len(set(kept.tolist()) & set(reference.tolist())) >= 0.97 * keep


def test_segments_saved_without_lengths_open_score_alike_and_are_rewritten(tmp_path: Path):
    rng = np.random.default_rng(3)
    docs, index = random_index(rng, words=25, longest=40, chunks=2000, per_call=11)
    live = np.ones(len(docs), dtype=bool)
    names = iter(range(1, 10_000))
    part = index.save(tmp_path, lambda: f"{next(names):05d}")
    query = [QueryTerm(t) for t in ("w3", "w9", "w21")]
    expected = index.search(query, live, 100)
    lens_files = sorted(tmp_path.glob("*.lens.npy"))
    assert len(lens_files) == len(part["segments"]) > 1
    for path in lens_files:  # as an older Bunko saved them
        path.unlink()

    reopened = KeywordIndex.load(tmp_path, part, live)
    assert reopened.search(query, live, 100) == expected
    assert all(seg.name == "" for seg in reopened.segments)  # to be written whole

    again = reopened.save(tmp_path, lambda: f"{next(names):05d}")
    assert set(again["segments"]).isdisjoint(part["segments"])
    assert all((tmp_path / f).exists() for f in reopened.files(again))
    assert KeywordIndex.load(tmp_path, again, live).search(query, live, 100) == expected


def test_a_posting_holds_its_chunk_length():
    index = KeywordIndex()
    index.add_many(0, [["a", "b", "a"], ["b"], ["a"] * 7])
    index.seal()
    (segment,) = index.segments
    # term "a" (id 0): slots 0 and 2, lengths 3 and 7; term "b": slots 0 and 1, 3 and 1.
    assert segment.slots.tolist() == [0, 2, 0, 1]
    assert segment.lens.tolist() == [3, 7, 3, 1]
    assert segment.tfs.tolist() == [2, 7, 1, 1]
