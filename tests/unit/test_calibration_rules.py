"""The calibration table and the abstention measure, on their own (no engine, no model)."""

from __future__ import annotations

import json

import pytest

from bunko.config import Settings
from bunko.evaluation.abstention import foreign_queries, measure, random_queries
from bunko.services.calibration import (
    CALIBRATIONS,
    VECTOR_ONLY,
    RawCosine,
    calibration_for,
    vector_only_calibration,
)

DEFAULT = Settings.model_fields["min_score"].default


@pytest.mark.parametrize("name", sorted(CALIBRATIONS))
def test_similarity_is_a_probability_rising_with_both_signals(name):
    row = CALIBRATIONS[name]
    grid = [i / 10 for i in range(11)]
    for a in grid:
        for b in grid:
            s = row.similarity(a, b)
            assert 0.0 <= s <= 1.0
            if a < 1:
                assert row.similarity(a + 0.1, b) >= s
            if b < 1:
                assert row.similarity(a, b + 0.1) >= s
    assert row.similarity(0.0, 0.0) < DEFAULT  # nothing in common: below the default cut
    assert row.similarity(0.0, 1.0) > DEFAULT  # every query term, however worded: above


def test_unknown_models_fall_back_to_keyword_coverage():
    assert calibration_for("use-multilingual-v3") is CALIBRATIONS["use-multilingual-v3"]
    e5 = calibration_for("multilingual-e5-small-q4")
    assert e5 is CALIBRATIONS["multilingual-e5-small"]
    assert calibration_for("bedrock-amazon.titan-embed-text-v2:0-1024") is CALIBRATIONS["keyword"]
    assert calibration_for(None) is CALIBRATIONS["keyword"]


def test_random_queries_are_seeded_and_varied():
    a, b = random_queries(30, seed=1), random_queries(30, seed=1)
    assert a == b and len(set(a)) == 30 and a != random_queries(30, seed=2)


def test_measure_counts_kept_and_refused():
    index = {"good": ["d1", "d2"], "lost": ["d9"], "weak": []}

    def fake_engine(query: str, cutoff: float) -> list[str]:
        if cutoff == 0:
            return index.get(query, ["d9"])
        return index.get(query, []) if query == "good" else []

    figures = measure(
        fake_engine,
        {"q1": ("good", {"d1"}), "q2": ("lost", {"d1"}), "q3": ("weak", {"d1"})},
        {"random": ["x", "y"], "other": ["good"]},
        min_score=0.3,
    )
    assert figures["answerable_found"] == 1 and figures["answerable_kept"] == 1.0
    assert figures["answerable_kept_all"] == round(1 / 3, 4)
    assert figures["refused_by_source"] == {"random": 1.0, "other": 0.0}
    assert figures["unanswerable_refused"] == round(2 / 3, 4)


def test_foreign_queries_come_from_sibling_sets(tmp_path):
    for name, texts in {"en": ["a claim"], "ja": ["質問です", "もう一つ"]}.items():
        (tmp_path / name).mkdir()
        rows = [json.dumps({"_id": str(i), "text": t}) for i, t in enumerate(texts)]
        (tmp_path / name / "queries.jsonl").write_text("\n".join(rows), encoding="utf-8")
    assert {k: sorted(v) for k, v in foreign_queries(tmp_path / "en").items()} == {
        "ja": ["もう一つ", "質問です"]
    }
    assert list(foreign_queries(tmp_path / "ja")) == ["en"]


def test_vector_only_search_has_its_own_cosine_row_or_the_raw_cosine():
    row = vector_only_calibration("use-multilingual-v3")
    assert row is VECTOR_ONLY["use-multilingual-v3"]
    assert row.similarity(0.1, 0.0) < DEFAULT < row.similarity(0.6, 0.0)
    assert row.similarity(0.5, 1.0) == row.similarity(0.5, 0.0)  # coverage plays no part
    raw = vector_only_calibration("openai-text-embedding-3-small-1536")
    assert isinstance(raw, RawCosine) and raw.similarity(0.42, 1.0) == 0.42
    assert raw.similarity(-0.2, 0.0) == 0.0


def test_e5_cosines_get_a_steeper_row_than_uses():
    # e5's cosines crowd into ~0.74-0.95 whatever the pair: an unrelated passage at 0.78 is
    # refused, a close paraphrase at 0.9 kept, which the raw cosine could not tell apart.
    row = vector_only_calibration("multilingual-e5-small-q4")
    assert row is VECTOR_ONLY["multilingual-e5-small"]
    assert row.similarity(0.78, 0.0) < DEFAULT < row.similarity(0.9, 0.0)
    hybrid = calibration_for("multilingual-e5-small-q4")
    assert hybrid.similarity(0.8, 0.0) < DEFAULT  # semantic closeness alone is not enough
    assert hybrid.similarity(0.9, 0.5) > DEFAULT  # with half the query's terms it is
