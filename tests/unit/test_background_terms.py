"""Background term weights: a term weighs by general language, not by the library."""

from __future__ import annotations

import pytest

from bunko.services.search.background_terms import (
    KANA_WEIGHT,
    MAX_WEIGHT,
    MIN_WEIGHT,
    coverage,
    term_weight,
    text_coverage,
    weighted_terms,
)


def weights(query: str) -> dict[str, float]:
    return {t.text: w for t, w in weighted_terms(query)}


@pytest.mark.parametrize(
    ("query", "light", "heavy"),
    [
        ("How many points did the Panthers defense give up?", ["how", "mani", "did"], ["panther"]),
        ("Wie viele Punkte gab die Verteidigung der Panthers ab?", ["wie", "viel"], ["panther"]),
        ("¿Cuántos puntos concedió la defensa de los Panthers?", ["de", "lo", "la"], ["panther"]),
        ("茶道を大成したのは誰ですか？", ["した", "のは", "です", "すか"], ["茶道", "大成"]),
    ],
)
def test_question_words_weigh_little_and_content_words_much(query, light, heavy):
    w = weights(query)
    assert all(w[t] <= KANA_WEIGHT for t in light), w
    assert all(w[t] >= 1.5 for t in heavy), w


def test_a_word_in_no_list_weighs_most_and_every_term_counts_a_little():
    assert term_weight("gifunebax") == MAX_WEIGHT
    assert term_weight("the") == MIN_WEIGHT


def test_coverage_is_the_weighted_share_of_the_query_held():
    terms = weighted_terms("What is the code word gifunebax about?")
    assert text_coverage(terms, "The code word of this probe is gifunebax.") > 0.9
    assert text_coverage(terms, "Tomatoes need six hours of sun.") < 0.1
    assert coverage([], ["anything"]) == 0.0


def test_a_japanese_question_about_a_japanese_passage_is_covered():
    terms = weighted_terms("茶道を大成したのは誰ですか？")
    text = "茶道は、安土桃山時代に千利休によって大成された。"
    assert text_coverage(terms, text) > 0.8


def test_a_single_kanji_query_matches_inside_a_bigram():
    terms = weighted_terms("猫")
    assert text_coverage(terms, "黒猫が庭にいる。") == 1.0
    assert text_coverage(terms, "犬が庭にいる。") == 0.0
