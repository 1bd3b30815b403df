"""Fusion ranks both engines' hits in the core; every score stays in [0, 1]."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bunko.ports import IndexHit
from bunko.services.search.fusion import (
    DEFAULT_VECTOR_WEIGHT,
    FUSION_METHODS,
    fuse,
    vector_weight_for,
)


def hits(*pairs: tuple[str, float]) -> list[IndexHit]:
    return [IndexHit(chunk_id=c, document_id=f"doc-{c}", score=s) for c, s in pairs]


KEYWORD = hits(("a", 12.0), ("b", 6.0), ("c", 3.0))
VECTOR = hits(("c", 0.9), ("d", 0.5), ("a", 0.2))


def test_max_is_telosdb_rule():
    fused = {h.chunk_id: h for h in fuse(KEYWORD, VECTOR, method="max")}
    assert fused["a"].score == pytest.approx(1.0)  # best BM25 normalises to 1
    assert fused["c"].score == pytest.approx(0.9)  # its vector score beats 3/12
    assert fused["b"].score == pytest.approx(0.5)
    assert fused["d"].vector_score == pytest.approx(0.5)
    assert fused["d"].text_score == 0.0


def test_convex_weights_normalised_scores():
    fused = {h.chunk_id: h for h in fuse(KEYWORD, VECTOR, method="convex", vector_weight=0.3)}
    # text minmax: a=1, b=(6-3)/9, c=0; vector minmax: c=1, d=(0.5-0.2)/0.7, a=0
    assert fused["a"].score == pytest.approx(0.7)
    assert fused["c"].score == pytest.approx(0.3)
    assert fused["b"].score == pytest.approx(0.7 * 3 / 9)
    assert fused["d"].score == pytest.approx(0.3 * 0.3 / 0.7)


def test_convex_with_one_engine_uses_that_engine_fully():
    only_text = fuse(KEYWORD, [], method="convex", vector_weight=0.3)
    assert only_text[0].chunk_id == "a" and only_text[0].score == pytest.approx(1.0)
    only_vector = fuse([], VECTOR, method="convex", vector_weight=0.3)
    assert only_vector[0].chunk_id == "c" and only_vector[0].score == pytest.approx(1.0)


def test_rrf_rewards_agreement():
    fused = fuse(KEYWORD, VECTOR, method="rrf")
    order = [h.chunk_id for h in fused]
    assert order[0] in {"a", "c"}  # in both lists
    assert set(order[:2]) == {"a", "c"}
    assert fused[0].score <= 1.0


def test_single_engine_methods_ignore_the_other():
    assert [h.chunk_id for h in fuse(KEYWORD, VECTOR, method="keyword")] == ["a", "b", "c"]
    assert [h.chunk_id for h in fuse(KEYWORD, VECTOR, method="vector")] == ["c", "d", "a"]


def test_negative_cosine_clips_to_zero():
    fused = fuse([], hits(("x", -0.4)), method="max")
    assert fused[0].vector_score == 0.0


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse(KEYWORD, VECTOR, method="magic")


scores = st.floats(min_value=-5, max_value=50, allow_nan=False)


@given(
    st.lists(st.tuples(st.sampled_from("abcdefgh"), scores), max_size=8, unique_by=lambda t: t[0]),
    st.lists(
        st.tuples(st.sampled_from("abcdefgh"), st.floats(-1, 1)),
        max_size=8,
        unique_by=lambda t: t[0],
    ),
    st.sampled_from(FUSION_METHODS),
    st.floats(0, 1),
)
def test_every_method_stays_in_unit_interval(kw, vec, method, weight):
    keyword = [IndexHit(c, c, abs(s)) for c, s in kw]
    fused = fuse(keyword, hits(*vec), method=method, vector_weight=weight)
    for h in fused:
        assert 0.0 <= h.score <= 1.0
        assert 0.0 <= h.vector_score <= 1.0
        assert 0.0 <= h.text_score <= 1.0
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name


def test_each_model_gets_its_measured_vector_weight_unless_one_is_configured():
    e5, use = _Named("multilingual-e5-small-q4"), _Named("use-multilingual-v3")
    assert vector_weight_for(e5) == 0.5
    assert vector_weight_for(use) == DEFAULT_VECTOR_WEIGHT == 0.3
    assert vector_weight_for(None) == DEFAULT_VECTOR_WEIGHT  # keyword-only search
    assert vector_weight_for(_Named("text-embedding-3-small")) == DEFAULT_VECTOR_WEIGHT
    assert vector_weight_for(e5, 0.2) == 0.2  # BUNKO_VECTOR_WEIGHT wins
    assert vector_weight_for(use, 0.0) == 0.0  # a configured 0 is a choice, not "unset"


def test_a_larger_vector_weight_lets_the_cosine_decide():
    # BM25 prefers a, the cosine prefers b: e5's weight ranks b first, USE's keeps a.
    keyword = hits(("a", 10.0), ("b", 5.0), ("c", 1.0))
    vector = hits(("b", 0.9), ("c", 0.5), ("a", 0.1))
    use_order = [h.chunk_id for h in fuse(keyword, vector, vector_weight=0.3)]
    e5_order = [h.chunk_id for h in fuse(keyword, vector, vector_weight=0.5)]
    assert use_order[0] == "a" and e5_order[0] == "b"
