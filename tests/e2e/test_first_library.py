"""A person's first minute (issue: the relevance gate): sign up, upload one file, ask about it
in plain words, in its language or another, over /chat/stream on a real server with the
default model. The answer cites the file; a question about something else finds nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bunko.services.chat.chat_text import NOTHING_FOUND
from tests.e2e.chat_harness import ask, load_documents

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"embedder": "use"}

FILES = Path(__file__).resolve().parents[1] / "data" / "first_library"


def library_of(rest, *names: str):
    """A new user whose library holds just these files."""
    user = rest.new_user()
    load_documents(user, {n: (FILES / n).read_text(encoding="utf-8") for n in names})
    return user


@pytest.fixture(scope="module")
def harbor(rest):
    return library_of(rest, "harbor.txt")


@pytest.fixture(scope="module")
def sado(rest):
    return library_of(rest, "sado.txt")


def cites(answer, name: str) -> bool:
    """The file is among the sources and the answer cites it by number."""
    numbers = {int(n) for n in re.findall(r"\[(\d+)\]", answer.text)}
    names = [s["fileName"] for s in answer.sources or []]
    return name in names and any(0 < n <= len(names) and names[n - 1] == name for n in numbers)


@pytest.mark.parametrize(
    "question",
    [
        "Who designed the lighthouse?",
        "When was the light first lit?",
        "How tall is the tower?",
        "Who was the last keeper and when did he leave?",
        "How much did the restoration cost?",
        "How many steps are there to the top?",
        "What does a ticket cost for a child?",
        "What is in the keeper's cottage now?",
    ],
)
def test_a_plain_question_about_the_only_file_is_answered_from_it(harbor, question):
    answer = ask(harbor.client, question, language="en")
    assert answer.done and not answer.errors
    assert cites(answer, "harbor.txt"), (answer.text, answer.sources)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        # aurak's userLanguage (ja, en, zh) is the app's language, not the question's
        ("Wer hat den Leuchtturm von Harbor Point entworfen?", "en"),
        ("¿Cuántos escalones tiene el faro de Harbor Point?", "en"),
        ("Harbor Point灯台を設計したのは誰ですか？", "ja"),
    ],
)
def test_a_question_in_another_language_quotes_the_file_with_its_citation(
    harbor, question, language
):
    answer = ask(harbor.client, question, language=language)
    assert cites(answer, "harbor.txt"), (answer.text, answer.sources)
    # the offline answerer quotes whole sentences of the English file (chosen by the model
    # that ranked it, as no word but the name is shared), not its title
    text = (FILES / "harbor.txt").read_text(encoding="utf-8")
    quotes = [line[2:].rsplit(" [", 1)[0] for line in answer.text.splitlines()[1:]]
    assert quotes and all(q in text and q.endswith(".") for q in quotes), answer.text


@pytest.mark.parametrize(
    "question",
    ["茶道を大成したのは誰ですか？", "茶室の入口は何と呼ばれますか？", "侘び茶を始めた人は？"],
)
def test_a_japanese_question_about_a_japanese_file(sado, question):
    answer = ask(sado.client, question, language="ja")
    assert cites(answer, "sado.txt"), (answer.text, answer.sources)


def test_the_code_word_question_of_the_web_app_is_answered(rest):
    user = library_of(rest, "probe.txt")
    answer = ask(user.client, "What is the code word gifunebax about? Answer from my files.")
    assert cites(answer, "probe.txt"), (answer.text, answer.sources)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("What is the capital of France?", "en"),
        ("How do I reset my password?", "en"),
        ("Wie backt man ein Sauerteigbrot?", "en"),
        ("明日の東京の天気は？", "ja"),
    ],
)
def test_a_question_about_something_else_finds_nothing(harbor, sado, question, language):
    for user in (harbor, sado):
        answer = ask(user.client, question, language=language)
        assert answer.sources == [] and answer.text == NOTHING_FOUND[language], answer.text
