"""A chunk's sentence reading, stored at ingest (domain/sentence_terms.py): it decodes to what
the evidence reads from the text, the evidence uses it without reading the text, and a
reading of another text or another version is never used."""

from __future__ import annotations

import pytest

from bunko.domain.sentence_terms import decode_sentence_terms
from bunko.services.search import evidence as evidence_module
from bunko.services.search.background_terms import in_its_language
from bunko.services.search.evidence import evidence, read_sentences, reading_version

TEXTS = {
    "osaka": "# Offices\n\nThe Osaka office has 24 desks. Visitors sign in at the reception!",
    "leave": "Employees receive 25 days of paid leave.\nTell your manager before 10:00 when ill.",
    "rules": "就業規則\nリモートワークは週に3日まで認められています。残業は事前に承認が必要です。",
    "one line": "Harbor Point",
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_stored_reading_decodes_to_what_the_text_reads(name):
    text = TEXTS[name]
    stored = read_sentences(text)
    assert decode_sentence_terms(stored, text, version=reading_version()) == (
        evidence_module._read(text)
    )


def test_a_reading_of_another_text_or_version_is_not_used():
    text = TEXTS["osaka"]
    stored = read_sentences(text)
    edited = text.replace("24", "30")
    assert decode_sentence_terms(stored, edited, version=reading_version()) is None
    assert decode_sentence_terms(stored, text, version="0.other") is None
    assert decode_sentence_terms(None, text, version=reading_version()) is None
    assert decode_sentence_terms("", text, version=reading_version()) is None


def clear() -> None:
    evidence_module._units.cache_clear()
    evidence_module._stored_units.cache_clear()


def test_the_evidence_reads_a_stored_reading_not_the_text():
    terms = in_its_language("How many desks does the Osaka office have?")
    clear()
    from_text = evidence(terms, TEXTS)
    assert evidence_module._units.cache_info().misses == len(TEXTS)
    clear()
    stored = {cid: read_sentences(text) for cid, text in TEXTS.items()}
    assert evidence(terms, TEXTS, stored=stored) == from_text
    assert evidence_module._units.cache_info().misses == 0  # no chunk read from its text


def test_a_chunk_whose_reading_names_another_text_is_read_from_its_text():
    terms = in_its_language("How many desks does the Osaka office have?")
    texts = dict(TEXTS, osaka=TEXTS["osaka"].replace("24 desks", "a roof terrace"))
    stale = {cid: read_sentences(text) for cid, text in TEXTS.items()}  # the old osaka text
    clear()
    found = evidence(terms, texts, stored=stale)
    assert evidence_module._units.cache_info().misses == 1  # the edited chunk alone
    assert found == evidence(terms, texts)
    assert found["osaka"].evidence < 1.0  # "desks" is no longer in it
