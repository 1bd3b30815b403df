"""Evidence finer than the topic (services/search/evidence.py), on passages written here."""

from __future__ import annotations

from bunko.services.search.background_terms import weighted_terms
from bunko.services.search.evidence import evidence

OFFICES = {
    "london": "The London office has 60 desks. It opens at 08:00 on weekdays.",
    "osaka": "The Osaka office has 24 desks. Visitors sign in at the office reception.",
    "leave": "Employees receive 25 days of paid leave. Tell your manager before 10:00 when ill.",
}


def test_a_sentence_holding_the_questions_specific_words_is_evidence():
    found = evidence(weighted_terms("How many desks does the Osaka office have?"), OFFICES)
    assert found["osaka"].evidence > 0.8
    assert found["osaka"].evidence > 2 * found["london"].evidence  # desks and office: topic
    assert found["leave"].evidence < 0.1


def test_a_question_on_the_librarys_topic_that_no_sentence_answers_has_little():
    # every passage is about offices; none says anything about dogs
    found = evidence(weighted_terms("Can I bring my dog to the office?"), OFFICES)
    assert max(e.evidence for e in found.values()) < 0.3
    assert 0.0 < found["osaka"].reach < 0.6  # "office" is there, "dog" and "bring" are not


def test_the_words_must_be_in_one_sentence_not_spread_over_the_passage():
    spread = {"p": "The Osaka office is in Umeda. Every desk has two screens."}
    together = {"p": "The Osaka office has 24 desks with two screens each."}
    question = weighted_terms("How many desks are in the Osaka office?")
    assert evidence(question, together)["p"].evidence > evidence(question, spread)["p"].evidence


def test_japanese_terms_are_read_as_the_engines_read_them():
    texts = {
        "rules": "リモートワークは週に3日まで認められています。残業は事前に上長の承認が必要です。",
        "osaka": "大阪オフィスは梅田駅から徒歩5分です。受付は9時から18時まで開いています。",
    }
    found = evidence(weighted_terms("リモートワークは週に何日までできますか？"), texts)
    assert found["rules"].evidence > 0.7 > found["osaka"].evidence
    refused = evidence(weighted_terms("育児休業は何か月取れますか？"), texts)
    assert max(e.evidence for e in refused.values()) < 0.3


def test_nothing_to_read_is_no_evidence():
    assert evidence(weighted_terms("anything"), {}) == {}
    assert evidence([], OFFICES) == {}
