"""Offline answers a person can read (issue 45, point 5): the extractive answerer quotes
sentences without Markdown's syntax, boilerplate, JSON paths or header rows, the best one
first, and every sentence an answer takes from a source is that source's evidence."""

from __future__ import annotations

import json

from bunko.adapters.extractive_chat import answer_quotes
from bunko.domain.evidence import evidences
from bunko.domain.readable import is_boilerplate, plain_markdown, structured_lines
from bunko.parsing.text import parse_csv, parse_json

RUNBOOK = """# Incident runbook

This section was last reviewed by the SRE team on 2026-03-01.

## Severity levels

- **SEV3**: A minor bug with a workaround. Open a ticket; no page is needed, even if a SEV1 \
responder is online.
- **SEV2**: A degraded service for some customers. Notify the on-call engineer in the \
`#incidents` channel.
- **SEV1**: A full outage for all customers. Page the incident commander at once and open a \
bridge call within 15 minutes.

## After an incident

Write a postmortem within five working days. See the [postmortem template](https://wiki.example/pm) \
for its headings.
"""
OFFICES = {
    "office_locations": [
        {"city": "Tokyo", "desks": 80, "pets_allowed": False},
        {"city": "Osaka", "desks": 24, "manager": "Ken Sato"},
    ]
}
TRAVEL = b"Destination,Per diem (USD),Approval\nDomestic,60,Manager\nInternational,120,Director\n"


def answer(question: str, passages: list[str]) -> list[str]:
    return [text for _, text, _ in answer_quotes(question, passages)]


def test_the_best_rule_comes_first_in_plain_words():
    quotes = answer("What do I do for a SEV1 incident?", [RUNBOOK])
    assert quotes[0] == (
        "SEV1: A full outage for all customers. Page the incident commander at once and open "
        "a bridge call within 15 minutes."
    )
    for quote in quotes:
        assert not any(mark in quote for mark in ("**", "- ", "`", "](")), quote
        assert "last reviewed" not in quote


def test_links_keep_their_words_and_boilerplate_is_never_quoted():
    quotes = answer("Where is the postmortem template?", [RUNBOOK])
    assert "See the postmortem template for its headings." in quotes
    assert is_boilerplate("This section was last reviewed by the SRE team on 2026-03-01.")
    assert is_boilerplate("最終更新日：2026年3月1日")
    assert not is_boilerplate("The lighthouse was reviewed by the council in 1871.")
    # when its subject changed can be the answer; only a line about the page is boilerplate
    assert not is_boilerplate("The rules were last updated in 1998 by FIFA.")
    assert not is_boilerplate("著作権法は1970年に制定された。")
    assert is_boilerplate("This page was last edited on 3 May 2020.")


def test_markdown_syntax_goes_and_the_words_stay():
    assert plain_markdown("- - **SEV1**: page *now* via `pager` ([runbook](http://x/y))") == (
        "SEV1: page now via pager (runbook)"
    )
    assert plain_markdown("snake_case_name and 2*3*4 stay") == "snake_case_name and 2*3*4 stay"


def test_json_rows_read_as_sentences_named_by_their_record():
    offices = parse_json(json.dumps(OFFICES).encode(), None).text
    assert "office_locations[1].desks: 24" in offices  # as stored
    quotes = answer("How many desks does the Osaka office have?", [offices])
    assert quotes[0] == "Osaka office location: 24 desks."
    assert not any("[" in q or "_" in q for q in quotes)
    rendered = structured_lines(offices.split("\n"))
    assert rendered[0] is None  # "city: Tokyo" names the record, it is not a fact of its own
    assert "Tokyo office location — pets allowed: no." in rendered.values()


def test_spreadsheet_rows_under_their_header_and_no_header_row():
    travel = parse_csv(TRAVEL, None).text
    quotes = answer("What is the per diem for international travel?", [travel])
    assert quotes[0] == "International — Per diem (USD): 120; Approval: Director."
    assert not any("Destination" in q for q in quotes)
    # a later chunk of the sheet, without its header: the cells in a row, not a header
    assert structured_lines(["Domestic\t60\tManager", "Overseas\t90\tDirector"]) == {
        0: "Domestic, 60, Manager.",
        1: "Overseas, 90, Director.",
    }


def test_a_markdown_table_loses_its_rule_and_header():
    table = ["| Office | Desks |", "|---|---|", "| Osaka | 24 |"]
    assert structured_lines(table) == {0: None, 1: None, 2: "Osaka — Desks: 24."}


def test_every_sentence_cited_is_evidence_in_the_answers_order():
    answer_text = (
        "Here is what the knowledge base says:\n"
        "- Write a postmortem within five working days. [1] — After an incident\n"
        "- SEV1: A full outage for all customers. Page the incident commander at once and "
        "open a bridge call within 15 minutes. [1]"
    )
    found = evidences(RUNBOOK, answer_text, 1, "What happens after a SEV1?")
    assert [e.text for e in found] == [
        "Write a postmortem within five working days.",
        "SEV1: A full outage for all customers. Page the incident commander at once and "
        "open a bridge call within 15 minutes.",
    ]
    # each points at the passage as written: the Markdown item, the sentence
    assert RUNBOOK[found[1].start : found[1].end].startswith("**SEV1**: A full outage")
    assert RUNBOOK[found[0].start : found[0].end] == found[0].text


def test_prose_that_only_looks_like_a_path_stays_prose():
    assert structured_lines(["Fig.1: The lighthouse in 1872.", "It is tall."]) == {}
    assert structured_lines(["office_locations[1].desks: 24"]) == {
        0: "Office location 2: 24 desks."
    }


def test_japanese_json_reads_as_japanese():
    offices = {"拠点": [{"名前": "東京", "席数": 80}, {"名前": "大阪", "席数": 24}]}
    text = parse_json(json.dumps(offices, ensure_ascii=False).encode(), None).text
    assert list(structured_lines(text.split("\n")).values()) == [
        None, "東京拠点 — 席数: 80.", None, "大阪拠点 — 席数: 24."
    ]  # fmt: skip
