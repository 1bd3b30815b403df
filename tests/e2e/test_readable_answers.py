"""Issue 45, points 4 and 5, over a real server's REST API with the offline answerer: search
hits mark the whole words they matched, and offline answers quote plain sentences (no
Markdown, boilerplate, JSON paths or header rows), the best first, each sentence an answer
takes from a source listed in that source's `quotes`."""

from __future__ import annotations

import re

import pytest

from tests.e2e.chat_harness import ask
from tests.e2e.company_files import upload_company_files
from tests.e2e.rest_harness import serve

STOP_OR_LETTER = re.compile(r"^(?:.|to|on|the|can|my|do|what|is|and)$", re.IGNORECASE)


@pytest.fixture(scope="module")
def company_reader(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("readable") / "data") as rest:
        user = rest.new_user()
        upload_company_files(user.client)
        yield user


def marks(hit: dict) -> list[str]:
    return [hit["content"][s:e] for s, e in hit["highlights"]]


def hit_of(company_reader, query: str, name: str) -> dict:
    found = company_reader.client.get("/search", params={"q": query})
    assert found.status_code == 200, found.text
    hits = {h["name"]: h for h in found.json()["items"]}
    assert name in hits, list(hits)
    return hits[name]


def test_search_marks_whole_words_never_letters_or_stop_words(company_reader):
    hit = hit_of(
        company_reader, "Can I join the onboarding on Friday to meet the team?", "handbook.md"
    )
    found = marks(hit)
    assert "Onboarding" in found and "Friday" in found and "team" in found
    assert not [m for m in found if STOP_OR_LETTER.match(m)], found
    for start, end in hit["highlights"]:  # whole words: no letter on either side
        before, after = hit["content"][start - 1 : start], hit["content"][end : end + 1]
        assert not before.isalnum() and not after.isalnum(), hit["content"][start - 3 : end + 3]


def test_search_marks_japanese_words_without_particles(company_reader):
    hit = hit_of(company_reader, "有給休暇は何日ですか", "就業規則.md")
    assert set(marks(hit)) == {"有給休暇"}


def test_the_sev1_answer_opens_with_the_sev1_rule_in_plain_words(company_reader):
    answer = ask(company_reader.client, "What do I do for a SEV1 incident?")
    lines = [line for line in answer.text.split("\n") if line.startswith("- ")]
    assert lines[0].startswith("- SEV1: A full outage for all customers. Page the incident")
    assert not re.search(r"\*\*|`|^- - |last reviewed", answer.text, re.MULTILINE), answer.text
    runbook = next(s for s in answer.sources if s["fileName"] == "runbook.md")
    # every bullet citing the runbook is one of its quotes, the first quoted first
    cited = len(re.findall(rf"\[{answer.sources.index(runbook) + 1}\]", answer.text))
    assert len(runbook["quotes"]) == cited >= 2
    first = runbook["quotes"][0]
    assert (runbook["quote"], runbook["quoteStart"]) == (first["quote"], first["quoteStart"])
    marked = runbook["content"][first["quoteStart"] : first["quoteEnd"]]
    assert marked.startswith("**SEV1**: A full outage")  # the passage as written


def test_json_and_spreadsheet_rows_read_as_sentences(company_reader):
    answer = ask(company_reader.client, "How many desks does the Osaka office have?")
    assert "- Osaka office location: 24 desks. [" in answer.text, answer.text
    assert "office_locations" not in answer.text
    offices = next(s for s in answer.sources if s["fileName"] == "offices.json")
    assert offices["quote"] == "Osaka office location: 24 desks."
    assert "office_locations[1].desks: 24" in offices["content"][offices["quoteStart"] :]

    answer = ask(company_reader.client, "What is the per diem for international travel?")
    assert "- International — Per diem (USD): 120; Approval: Director. [" in answer.text
    assert "Destination" not in answer.text, answer.text  # the header row is never quoted


def test_boilerplate_is_never_quoted_in_japanese_either(company_reader):
    answer = ask(company_reader.client, "有給休暇は何日付与されますか")
    assert "10日付与されます" in answer.text
    assert "最終更新" not in answer.text
