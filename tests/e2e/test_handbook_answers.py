"""A team's own library (issue 45): a small company handbook in English and Japanese, asked
over /chat/stream on a real server with the default model. A question the handbook answers is
answered from the right file; a question on the handbook's own topic that no file answers
("Can I bring my dog to the office?" over a library about offices and leave) is refused, not
answered from the nearest file. With a chat model configured, the prompt tells it to say so,
and an answer that says so keeps no sources."""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path

import pytest

from bunko.services.chat.chat_text import NOT_ANSWERED, NOTHING_FOUND
from tests.e2e.chat_harness import ask
from tests.e2e.recording_llm import recording_llm
from tests.e2e.rest_harness import wait_until_done

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"embedder": "use"}

FILES = Path(__file__).resolve().parents[1] / "data" / "handbook"


@pytest.fixture(scope="module")
def handbook_reader(rest):
    user = rest.new_user()
    for path in sorted(FILES.iterdir()):
        kind = mimetypes.guess_type(path.name)[0] or "text/plain"
        response = user.client.post("/upload", files={"file": (path.name, path.read_bytes(), kind)})
        assert response.status_code == 201, response.text
        assert wait_until_done(user.client, response.json()["id"])["status"] == "completed"
    return user


def cited_files(answer) -> set[str]:
    names = [s["fileName"] for s in answer.sources or []]
    numbers = {int(n) for n in re.findall(r"\[(\d+)\]", answer.text)}
    return {names[n - 1] for n in numbers if 0 < n <= len(names)}


ANSWERED = [
    ("How many days of paid annual leave do I get?", "en", "leave-policy.md"),
    ("When do I need a doctor's note for sick days?", "en", "leave-policy.md"),
    ("Who gets paged for a SEV1 incident?", "en", "incident-runbook.md"),
    ("How soon after an incident is the postmortem due?", "en", "incident-runbook.md"),
    ("How many desks does the Osaka office have?", "en", "offices.json"),
    ("What is the hotel limit per night in Japan?", "en", "travel-rules.md"),
    ("Who approves an expense of 800 euros?", "en", "expenses.md"),
    ("What should I do if my laptop is stolen?", "en", "it-security.md"),
    ("Who meets me on my first day?", "en", "onboarding.md"),
    ("リモートワークは週に何日までできますか？", "ja", "就業規則.md"),
    ("経費の申請期限はいつですか？", "ja", "経費精算.md"),
    ("大阪オフィスの受付は何時まで開いていますか？", "ja", "大阪オフィス案内.md"),
    ("コアタイムは何時から何時までですか？", "ja", "就業規則.md"),
]


@pytest.mark.parametrize(("question", "language", "file"), ANSWERED)
def test_what_the_handbook_says_is_answered_from_its_file(
    handbook_reader, question, language, file
):
    assert_answered_from(handbook_reader.client, question, language, file)


def assert_answered_from(client, question: str, language: str, file: str) -> None:
    answer = ask(client, question, language=language)
    assert answer.done and not answer.errors
    assert file in cited_files(answer), (answer.text, answer.sources)


def assert_refused(client, question: str, language: str) -> None:
    answer = ask(client, question, language=language)
    assert answer.done and not answer.errors
    assert answer.sources == [] and answer.text == NOTHING_FOUND[language], (
        answer.text,
        [(s["fileName"], s["score"]) for s in answer.sources or []],
    )


NOT_SAID = [
    ("Can I bring my dog to the office?", "en"),
    ("What is the parental leave policy?", "en"),
    ("Does the company pay for a gym membership?", "en"),
    ("How do I enrol in the company pension plan?", "en"),
    ("When do stock options vest?", "en"),
    ("育児休業は何か月取れますか？", "ja"),
    ("社員食堂はありますか？", "ja"),
    ("ペットをオフィスに連れてきてもいいですか？", "ja"),
]


@pytest.mark.parametrize(("question", "language"), NOT_SAID)
def test_what_the_handbook_does_not_say_is_refused(handbook_reader, question, language):
    assert_refused(handbook_reader.client, question, language)


def test_a_chat_model_is_told_to_say_the_sources_do_not_answer_and_then_keeps_none(handbook_reader):
    client = handbook_reader.client
    with recording_llm([NOT_ANSWERED["en"]]) as llm:
        config = client.post("/model-configs", json={
            "name": "recorder", "provider": "local", "modelId": "recorder", "type": "llm",
            "baseUrl": llm.url,
        })  # fmt: skip
        assert config.status_code == 201, config.text
        client.put("/user-settings", json={"selectedLLMId": config.json()["id"]})
        try:
            # retrieval finds the sick-day rules; the model reads them and declines
            answer = ask(client, "How many sick days may I take without a note?", language="en")
            assert llm.requests and NOT_ANSWERED["en"] in llm.requests[-1][0]["content"]
            assert answer.text == NOT_ANSWERED["en"] and answer.sources == [], answer.sources
        finally:
            client.put("/user-settings", json={"selectedLLMId": None})
