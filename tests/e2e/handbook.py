"""The handbook of tests/data/handbook: its files, the questions it answers (with the file
each answer must cite) and those it does not, and the checks an answer must pass."""

from __future__ import annotations

import re
from pathlib import Path

from bunko.services.chat.chat_text import NOTHING_FOUND
from tests.e2e.chat_harness import ask

FILES = Path(__file__).resolve().parents[1] / "data" / "handbook"


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
