"""What a search hit marks as matched (domain/highlights): whole words as the analyzer
matched them, Japanese bigrams joined back into the run they came from, no stop words, no
single letters inside words."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from bunko.domain.highlights import matched_spans
from bunko.domain.keyword_analysis import index_terms, term_spans


def marked(text: str, query: str) -> list[str]:
    return [text[s:e] for s, e in matched_spans(text, query)]


def test_the_issues_examples_mark_whole_words_and_no_stop_word_or_letter():
    text = "Onboarding starts on Friday: the team works together with new hires."
    found = marked(text, "Can I bring my dog to the onboarding on Friday?")
    assert found == ["Onboarding", "Friday"]  # not "i", "to", "on" inside other words


def test_a_stem_marks_every_word_it_came_from():
    text = "Onboard new hires; the onboarded get a buddy during onboarding."
    assert marked(text, "onboarding") == ["Onboard", "onboarded", "onboarding"]


def test_stop_words_are_marked_only_when_the_query_has_nothing_else():
    text = "To be or not to be."
    assert marked(text, "to be or not to be") == ["To", "be", "or", "not", "to", "be"]
    assert marked(text, "what is it not") == ["not"]


def test_japanese_bigrams_join_into_the_run_without_particles():
    text = "有給休暇とは、労働者に与えられる休暇です。全文検索エンジンを使う。"
    assert marked(text, "有給休暇とは何ですか") == ["有給休暇", "休暇"]  # not です, とは
    assert marked(text, "検索エンジン") == ["検索エンジン"]


def test_a_single_kanji_marks_it_inside_words():
    assert marked("黒猫がいる。猫も。", "猫") == ["猫", "猫"]


def test_offsets_point_into_the_text_as_stored():
    # half-width katakana, a ligature and a decomposed accent: NFKC changes their length
    text = "Café ｶﾀｶﾅ and ﬁles, cafe\u0301."
    assert marked(text, "cafe カタカナ file") == ["Café", "ｶﾀｶﾅ", "ﬁles", "cafe\u0301"]


@given(st.text(max_size=80))
def test_term_spans_find_the_index_terms(text):
    assert sorted(t for t, _, _ in term_spans(text)) == sorted(index_terms(text))


@given(st.text(max_size=80), st.text(max_size=20))
def test_spans_are_ordered_inside_the_text_and_apart(text, query):
    spans = matched_spans(text, query)
    assert all(0 <= s < e <= len(text) for s, e in spans)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))
