"""The keyword index's segments, merges, deletes and saved form score like plain BM25."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from bunko.adapters.local.engine.keyword_index import K1, B, KeywordIndex, best_slots
from bunko.adapters.local.engine.keyword_postings import ADD_TERMS
from bunko.domain.keyword_analysis import QueryTerm


def reference(docs: dict[int, list[str]], query: list[str]) -> dict[int, float]:
    """Okapi BM25 straight from the definition, over the live documents `docs`."""
    n = len(docs)
    avg = sum(len(t) for t in docs.values()) / n
    scores: dict[int, float] = {}
    for term in query:
        df = sum(term in t for t in docs.values())
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for slot, terms in docs.items():
            tf = terms.count(term)
            if tf:
                norm = K1 * (1 - B + B * len(terms) / avg)
                scores[slot] = scores.get(slot, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
    return scores


@pytest.mark.parametrize("pending", [7, 64, 100_000])
def test_segments_merges_deletes_and_reload_score_like_bm25(tmp_path: Path, pending: int):
    rng = np.random.default_rng(pending)
    words = [f"w{i}" for i in range(40)]
    docs = {s: list(rng.choice(words, size=int(rng.integers(1, 30)))) for s in range(600)}
    index = KeywordIndex(pending_postings=pending)
    for start in range(0, 600, 13):  # per-document sized calls
        index.add_many(start, [docs[s] for s in range(start, min(600, start + 13))])
    live = np.ones(600, dtype=bool)
    for slot in rng.choice(600, size=150, replace=False).tolist():
        index.remove(slot)
        live[slot] = False
        del docs[slot]
    names = iter(range(1, 1000))
    part = index.save(tmp_path, lambda: f"{next(names):04d}")
    reloaded = KeywordIndex.load(tmp_path, part, live, pending_postings=pending)
    query = ["w1", "w7", "w33", "nothing"]
    expected = reference(docs, query)
    for subject in (index, reloaded):
        hits = subject.search([QueryTerm(t) for t in query], live, 1000)
        assert {slot for slot, _ in hits} == set(expected)
        for slot, score in hits:
            assert score == pytest.approx(expected[slot], rel=1e-5)
        scores = [score for _, score in hits]
        assert scores == sorted(scores, reverse=True)
        # The query's weight: Σ idf over its terms ("w1" twice counts twice), df as defined.
        weighed = [*query, "w1"]
        expected_weight = sum(
            math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            for df in (sum(t in terms for terms in docs.values()) for t in weighed)
        )
        weight = subject.query_weight([QueryTerm(t) for t in weighed], live)
        assert weight == pytest.approx(expected_weight, rel=1e-9)


def test_one_call_larger_than_a_counting_slice_scores_like_bm25():
    """add_many counts ADD_TERMS terms at a time (a 10 MB file's chunks come in one call)."""
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(300)]
    sizes = rng.integers(50, 250, size=3_000)
    docs = {s: list(rng.choice(words, size=int(size))) for s, size in enumerate(sizes)}
    assert sum(map(len, docs.values())) > ADD_TERMS  # two slices at least
    index = KeywordIndex(pending_postings=1_000_000)
    assert index.add_many(0, list(docs.values())) == sum(map(len, docs.values()))
    query = ["w1", "w2", "w299"]
    expected = reference(docs, query)
    hits = index.search([QueryTerm(t) for t in query], np.ones(len(docs), dtype=bool), 5_000)
    assert {slot for slot, _ in hits} == set(expected)
    for slot, score in hits:
        assert score == pytest.approx(expected[slot], rel=1e-5)


def test_allowed_mask_filters_results_but_not_statistics():
    index = KeywordIndex()
    index.add_many(0, [["a", "b"], ["a"], ["b"]])
    live = np.ones(3, dtype=bool)
    allowed = np.array([False, True, True])
    everything = dict(index.search([QueryTerm("a")], live, 10))
    filtered = dict(index.search([QueryTerm("a")], live, 10, allowed))
    assert filtered == {1: everything[1]}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reached", [5, 300, 50_000])
def test_best_slots_equal_a_full_ranking(reached: int, dtype):
    """The score floor from a sample of the postings never drops a slot of the true top."""
    rng = np.random.default_rng(reached)
    slots = rng.choice(200_000, size=reached, replace=False)
    postings = np.repeat(slots, rng.integers(1, 4, size=reached))  # a slot per matching term
    scores = np.zeros(200_000, dtype=dtype)
    scores[slots] = np.round(rng.gamma(2.0, size=reached), 2)  # rounded: ties happen
    scores[slots[: reached // 10]] = 0.0  # reached, but filtered out
    best = best_slots(scores, rng.permutation(postings), 100)
    positive = np.flatnonzero(scores > 0)
    expected = sorted(positive.tolist(), key=lambda s: (-np.float32(scores[s]), s))[:100]
    assert [s for s, _ in best] == expected
    assert [score for _, score in best] == [float(np.float32(scores[s])) for s in expected]


def test_an_expanded_query_after_deletes_scores_like_an_index_of_the_live_chunks():
    """A one-character CJK query (one unit over every term holding the character) counts
    df over live chunks only, in `search` and `query_weight` alike."""
    rng = np.random.default_rng(11)
    words = ["東京", "京都", "大阪", "東西", "北海道", "名古屋"]
    docs = [list(rng.choice(words, size=int(rng.integers(1, 8)))) for _ in range(300)]
    index = KeywordIndex()
    index.add_many(0, docs)
    live = np.ones(300, dtype=bool)
    for slot in rng.choice(300, size=60, replace=False).tolist():
        index.remove(slot)
        live[slot] = False
    kept = np.flatnonzero(live)
    fresh = KeywordIndex()
    fresh.add_many(0, [docs[s] for s in kept])
    query = [QueryTerm("京", expand=True), QueryTerm("大阪")]
    hits = index.search(query, live, 1000)
    expected = fresh.search(query, np.ones(len(kept), dtype=bool), 1000)
    assert [(int(kept[s]), pytest.approx(x, rel=1e-5)) for s, x in expected] == hits
    assert index.query_weight(query, live) == pytest.approx(
        fresh.query_weight(query, np.ones(len(kept), dtype=bool)), rel=1e-9
    )
