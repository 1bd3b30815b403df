"""Keyword analysis: CJK bigrams, Latin stemming, and queries that are only ever terms."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bunko.domain.keyword_analysis import (
    ENGLISH_STOP_WORDS,
    MAX_QUERY_TERMS,
    QueryTerm,
    index_terms,
    is_cjk_term,
    query_terms,
)


def texts(terms: list[QueryTerm]) -> list[str]:
    return [t.text for t in terms]


def test_japanese_runs_become_overlapping_bigrams():
    assert index_terms("全文検索") == ["全文", "文検", "検索"]
    # Kanji and kana in one run stay one run; punctuation ends a run.
    assert index_terms("猫が好き。犬") == ["猫が", "が好", "好き", "犬"]


def test_a_word_inside_running_text_shares_its_bigrams():
    document = set(index_terms("全文検索エンジンを作る"))
    assert set(texts(query_terms("検索"))) <= document
    assert set(texts(query_terms("エンジン"))) <= document


def test_latin_inside_japanese_is_a_separate_stemmed_word():
    assert index_terms("SQLiteでRunning") == ["sqlite", "で", "run"]


def test_width_variants_meet():
    # NFKC: full-width Latin and half-width katakana index like their usual forms.
    assert index_terms("ＳＱＬ ｶﾀｶﾅ") == index_terms("SQL カタカナ")


def test_hangul_is_cut_into_bigrams():
    assert index_terms("검색엔진") == ["검색", "색엔", "엔진"]


def test_english_is_case_folded_diacritics_removed_and_porter_stemmed():
    assert index_terms("Running CONNECTIONS café Résumé") == ["run", "connect", "cafe", "resum"]
    assert texts(query_terms("connected runs")) == ["connect", "run"]


def test_underscore_and_punctuation_separate_words():
    assert index_terms("snake_case, dot.name") == ["snake", "case", "dot", "name"]


def test_single_cjk_character_query_expands():
    assert query_terms("猫") == [QueryTerm("猫", expand=True)]
    assert query_terms("黒猫") == [QueryTerm("黒猫")]


def test_stop_words_are_dropped_unless_nothing_else_is_left():
    assert texts(query_terms("the role of the cells")) == ["role", "cell"]
    assert texts(query_terms("to be or not to be")) == ["to", "be", "or", "not"]
    assert texts(query_terms("the cells", drop_stop_words=False)) == ["cell", "the"]
    assert "the" in ENGLISH_STOP_WORDS


def test_query_terms_are_distinct_and_capped():
    assert texts(query_terms("cell cells CELL")) == ["cell"]
    many = " ".join(f"word{i}" for i in range(500))
    assert len(query_terms(many)) == MAX_QUERY_TERMS


@pytest.mark.parametrize("query", ["", "   ", '"', "*", "-", "()", "。、「」", "NEAR(", "a:b"])
def test_operators_and_punctuation_are_never_terms(query):
    assert all(t.text.isalnum() for t in query_terms(query))
    assert not any(set(t.text) & set('"*():-^') for t in query_terms(query))


def test_is_cjk_term():
    assert is_cjk_term("検索")
    assert is_cjk_term("한국")
    assert not is_cjk_term("sqlite")


@given(st.text(max_size=200))
def test_any_text_analyses_without_error_into_clean_terms(text):
    for term in index_terms(text):
        assert term
        assert not any(c.isspace() for c in term)  # terms are stored space-joined
    for term in query_terms(text):
        assert term.text
        assert not any(c.isspace() for c in term.text)
