"""Issue 31 as a new user meets it: upload a five-page PDF report (made here, laid out line by
line; its budget is on page 4, and the sentence with the grant runs over a line break), then
ask the offline answerer over /chat/stream on a real server. Every answer quotes whole
sentences with their figures: no heading on its own, no sentence cut at a line break, none
twice."""

from __future__ import annotations

import pytest

from bunko.domain.sentences import is_heading, is_whole, sentence_key
from bunko.evaluation.answers import quotes_of
from bunko.parsing import parse
from tests.e2e.chat_harness import ask
from tests.e2e.rest_harness import wait_until_done
from tests.report_pdf import LIGHTHOUSE_REPORT, make_report_pdf

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"embedder": "use"}

BUDGET = (
    "The total budget for the restoration was $480,000, of which $312,500 was spent on the "
    "lantern and the masonry."
)
GRANT = (
    "A grant of $120,000 came from the Maritime Heritage Fund; the rest was paid by the town "
    "council."
)
BUILT = (
    "The lighthouse was built in 1871 by the engineer Thomas Stevenson, who designed its "
    "cast-iron lantern and the well-known spiral stair that visitors climb today."
)
REPORT = make_report_pdf(LIGHTHOUSE_REPORT)


@pytest.fixture(scope="module", params=[{}, {"chunkSize": "300", "chunkOverlap": "100"}],
                ids=["default-chunks", "small-overlapping-chunks"])  # fmt: skip
def report_reader(rest, request):
    user = rest.new_user()
    response = user.client.post(
        "/upload",
        files={"file": ("harbor-point-report.pdf", REPORT, "application/pdf")},
        data=request.param,
    )
    assert response.status_code == 201, response.text
    assert wait_until_done(user.client, response.json()["id"])["status"] == "completed"
    return user


def test_the_figures_are_on_page_four_of_a_five_page_report():
    doc = parse(REPORT, filename="harbor-point-report.pdf")
    assert [n for _, _, n in doc.pages] == [1, 2, 3, 4, 5]
    start, end, _ = doc.pages[3]
    assert BUDGET in doc.text[start:end] and GRANT in doc.text[start:end]


def quotes(answer) -> list[str]:
    assert answer.done and not answer.errors and answer.sources, answer.events
    found = quotes_of(answer.text)
    assert found, answer.text
    assert not any(is_heading(q) for q in found), answer.text
    assert all(is_whole(q) for q in found), answer.text
    keys = [sentence_key(q.split(" — ", 1)[-1]) for q in found]
    assert len(keys) == len(set(keys)), answer.text
    return found


def test_the_budget_question_is_answered_with_the_figure(report_reader):
    answer = ask(report_reader.client, "What does the lighthouse report say about the budget?")
    found = quotes(answer)
    assert BUDGET in found[0], answer.text
    assert all(s["fileName"] == "harbor-point-report.pdf" for s in answer.sources)


def test_a_follow_up_about_the_grant_gets_the_whole_sentence(report_reader):
    history = [
        {"role": "user", "content": "What does the lighthouse report say about the budget?"},
        {"role": "assistant", "content": f"{BUDGET} [1]"},
    ]
    answer = ask(report_reader.client, "And how much came from the grant?", history=history)
    found = quotes(answer)
    assert any(GRANT in q for q in found), answer.text
    assert "A grant of [" not in answer.text


def test_when_and_by_whom_quotes_the_sentence_once(report_reader):
    answer = ask(report_reader.client, "When was the lighthouse built and by whom?")
    found = quotes(answer)
    assert BUILT in found[0], answer.text
    assert sum(BUILT in q for q in found) == 1
