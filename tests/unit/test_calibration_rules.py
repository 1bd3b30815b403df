"""The calibration table and the abstention measure, on their own (no engine, no model)."""

from __future__ import annotations

import itertools
import json
import math

import pytest

from bunko.config import Settings
from bunko.evaluation.abstention import foreign_queries, measure, random_queries
from bunko.services.search.calibration import (
    CALIBRATIONS,
    CLAIM_ROWS,
    E5_CLAIM_CURVE,
    GENERIC,
    USE_CLAIM_CURVE,
    VECTOR_ONLY,
    ModelScale,
    calibration_for,
    has_row,
    on_curve,
    vector_only_calibration,
)
from bunko.services.search.relevance_gate import row_for

DEFAULT = Settings.model_fields["min_score"].default


@pytest.mark.parametrize("name", sorted(CALIBRATIONS))
def test_similarity_is_a_probability_rising_with_every_signal(name):
    row = CALIBRATIONS[name]
    grid = [i / 5 for i in range(6)]
    for a, b, c in itertools.product(grid, grid, grid):
        s = row.similarity(a, b, c)
        assert 0.0 <= s <= 1.0
        if a < 1:
            assert row.similarity(a + 0.2, b, c) >= s
        if b < 1:
            assert row.similarity(a, b + 0.2, c) >= s
        if c < 1:
            assert row.similarity(a, b, c + 0.2) >= s
    unrelated = row.scale.unrelated
    assert row.similarity(unrelated, 0.0, 0.0) < DEFAULT  # nothing in common: refused
    assert row.similarity(unrelated, 1.0, 1.0) > DEFAULT  # every query word, however worded


@pytest.mark.parametrize("name", ["use-multilingual-v3", "multilingual-e5-small"])
def test_a_translation_alone_passes_and_an_unrelated_passage_does_not(name):
    # Vectors count on their own (cross-lingual questions have no words in common): a
    # cosine at the model's "same passage, other language" anchor passes with no keyword.
    row = CALIBRATIONS[name]
    assert row.similarity(row.scale.related, 0.0, 0.0) > DEFAULT
    assert row.similarity(row.scale.unrelated, 0.0, 0.0) < DEFAULT


def test_unknown_models_are_judged_on_their_measured_scale():
    assert calibration_for("use-multilingual-v3") is CALIBRATIONS["use-multilingual-v3"]
    assert calibration_for("multilingual-e5-small-q4") is CALIBRATIONS["multilingual-e5-small"]
    assert has_row("use-multilingual-v3") and not has_row("bedrock-amazon.titan-embed-text-v2:0")
    scale = ModelScale(unrelated=0.2, related=0.6)
    row = calibration_for("bedrock-amazon.titan-embed-text-v2:0-1024", scale)
    assert row.scale == scale and row.cosine == GENERIC.cosine
    # the cosine counts with the keywords: a third of the query's words, and a cosine at
    # the model's "translation" anchor, pass; the same words at its "unrelated" anchor do not
    assert row.similarity(0.6, 0.0, 0.3) > DEFAULT > row.similarity(0.2, 0.0, 0.3)
    # no scale (no model, or it could not be measured): keywords alone
    assert calibration_for("openai-x", None) is CALIBRATIONS["keyword"]
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


def test_vector_only_search_has_its_own_cosine_row():
    row = vector_only_calibration("use-multilingual-v3")
    assert row is VECTOR_ONLY["use-multilingual-v3"]
    assert row.similarity(0.1, 0.0) < DEFAULT < row.similarity(0.6, 0.0)
    assert row.similarity(0.5, 1.0, 1.0) == row.similarity(0.5, 0.0)  # keywords play no part
    e5 = vector_only_calibration("multilingual-e5-small-q4")
    assert e5 is VECTOR_ONLY["multilingual-e5-small"]
    # e5's cosines crowd into ~0.74-0.95: an unrelated passage at 0.78 refused, 0.9 kept
    assert e5.similarity(0.78, 0.0) < DEFAULT < e5.similarity(0.9, 0.0)
    scale = ModelScale(unrelated=0.3, related=0.8)
    other = vector_only_calibration("openai-text-embedding-3-small-1536", scale)
    assert other.scale == scale and other.similarity(0.3, 0.0) < DEFAULT < other.similarity(
        0.8, 0.0
    )


def test_the_vector_leg_leads_when_the_query_words_are_absent():
    from bunko.ports import IndexHit
    from bunko.services.search.fusion import KEYWORD_ABSENT, KEYWORD_SURE, adapted_vector_weight

    def hit(coverage: float) -> list[IndexHit]:
        return [IndexHit("c", "d", coverage * 10.0)]  # keyword weight 10 below

    assert adapted_vector_weight(0.3, hit(KEYWORD_SURE), 10.0) == 0.3
    assert adapted_vector_weight(0.3, hit(1.0), 10.0) == 0.3
    assert adapted_vector_weight(0.3, hit(KEYWORD_ABSENT), 10.0) == 1.0
    assert adapted_vector_weight(0.3, [], 0.0) == 1.0  # no keyword hit at all
    middle = adapted_vector_weight(0.3, hit((KEYWORD_SURE + KEYWORD_ABSENT) / 2), 10.0)
    assert abs(middle - 0.65) < 1e-6


def test_the_vectors_lead_only_as_far_as_they_are_confident():
    from bunko.ports import IndexHit
    from bunko.services.search.fusion import adapted_vector_weight, vector_confidence

    absent = [IndexHit("c", "d", 0.0)]  # no keyword coverage at all
    assert adapted_vector_weight(0.3, absent, 10.0, vector_confidence(0.5)) == 1.0
    assert abs(adapted_vector_weight(0.3, absent, 10.0, vector_confidence(0.25)) - 0.65) < 1e-9
    assert adapted_vector_weight(0.3, absent, 10.0, vector_confidence(-0.1)) == 0.3


def test_a_japanese_question_over_japanese_passages_is_judged_by_the_japanese_row():
    from bunko.services.search.relevance_gate import TextSignals, for_question

    row = CALIBRATIONS["use-multilingual-v3"]
    assert row.japanese is not None
    held = TextSignals(0.0, reach=0.4)  # the window holds some of the question's words
    assert for_question(row, "育児休業は何か月取れますか？", held) is row.japanese
    # kanji and particles only: the language tables read Chinese too, the kana tell
    assert for_question(row, "文部科学大臣の通称は？", held) is row.japanese
    # over passages in another language (reach 0), or in another script: the row itself
    assert for_question(row, "育児休業は何か月取れますか？", TextSignals(0.0)) is row
    assert for_question(row, "What is the parental leave policy?", held) is row
    assert for_question(row, "文部科学大臣", held) is row  # no kana: maybe Chinese


def test_e5s_japanese_row_judges_a_japanese_question_on_the_querys_own_scale():
    from bunko.services.search.relevance_gate import TextSignals, for_question

    e5 = CALIBRATIONS["multilingual-e5-small"]
    assert e5.japanese is not None and e5.japanese != e5
    held = TextSignals(0.0, reach=0.4)
    assert for_question(e5, "育児休業は何か月取れますか？", held) is e5.japanese
    assert for_question(e5, "What is the parental leave policy?", held) is e5
    # a per-query scale (query_scale.py) moves the Japanese row with the row
    moved = e5.on_scale(ModelScale(0.7, 0.85))
    assert for_question(moved, "育児休業は何か月取れますか？", held).scale == ModelScale(0.7, 0.85)


def test_a_claim_is_judged_by_its_models_claim_row():
    use = CALIBRATIONS["use-multilingual-v3"]
    claim = "Vitamin D deficiency is unrelated to birth weight."
    assert row_for(claim, use) == CLAIM_ROWS["use-multilingual-v3"] != use
    assert row_for("What is the parental leave policy?", use) is use
    # on the row's own scale (a per-query scale moves it), its weights the claim row's
    moved = row_for(claim, use.on_scale(ModelScale(0.1, 0.8)))
    assert moved == CLAIM_ROWS["use-multilingual-v3"].on_scale(ModelScale(0.1, 0.8))
    # e5's (the refined generation's) has its own, on the query's scale too
    e5 = CALIBRATIONS["multilingual-e5-small"]
    assert row_for(claim, e5) == CLAIM_ROWS["multilingual-e5-small"] != e5
    assert row_for(claim, e5.on_scale(ModelScale(0.7, 0.85))).scale == ModelScale(0.7, 0.85)
    # a row without a claim row of its own (a configured one, GENERIC, keyword-only) judges
    # claims itself
    for row in (CALIBRATIONS["keyword"], GENERIC):
        assert row_for(claim, row) is row
    # each claim row reads its scores on a curve of its own (docs/relevance.md)
    assert row_for(claim, use.on_scale(ModelScale(0.1, 0.8))).curve == USE_CLAIM_CURVE
    assert row_for(claim, e5).curve == E5_CLAIM_CURVE != e5.curve


ROWS = {
    **{f"{name}": row for name, row in CALIBRATIONS.items() if row.curve},
    **{f"{name} (claims)": row for name, row in CLAIM_ROWS.items()},
    **{f"{name} (Japanese)": row.japanese for name, row in CALIBRATIONS.items() if row.japanese},
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_every_curve_rises_below_one_and_keeps_the_default_cut(name):
    # A curve only says what a score means: the default min_score must stay on the score the
    # row was chosen for (its logit), so a new curve never moves what is kept or refused.
    curve = ROWS[name].curve
    cut = math.log(DEFAULT / (1 - DEFAULT))
    assert on_curve(curve, cut) == pytest.approx(DEFAULT, abs=1e-3)
    assert on_curve(curve, cut - 0.01) < DEFAULT <= on_curve(curve, cut + 0.01)
    zs = [-12.0 + i * 0.05 for i in range(800)]
    shown = [on_curve(curve, z) for z in zs]
    assert all(b > a for a, b in itertools.pairwise(shown))
    assert shown[0] > 0.0 and shown[-1] < 1.0
