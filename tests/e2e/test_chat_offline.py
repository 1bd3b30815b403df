"""POST /chat/stream over a real socket with the offline extractive answerer (the default):
progress in the user's language, a cited answer, deduplicated sources, abstention."""

from __future__ import annotations

import re

import pytest

from bunko.services.chat.chat_text import FOUND, NOTHING_FOUND, SEARCHING
from tests.e2e.chat_harness import ask, load_documents
from tests.e2e.rest_harness import assert_error


@pytest.fixture(scope="module")
def user(rest):
    user = rest.new_user()
    load_documents(user)
    return user


def progress(language):
    return [SEARCHING[language], FOUND[language]]


def test_answer_cites_numbered_sources(user):
    answer = ask(user.client, "When was the lighthouse built?")
    assert answer.done and not answer.errors
    assert answer.progress == progress("en")
    assert "1872" in answer.text
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer.text)}
    assert cited and all(1 <= n <= len(answer.sources) for n in cited)
    first = answer.sources[0]
    assert set(first) >= {"fileName", "content", "score", "chunkIndex", "documentId"}
    assert first["fileName"] == "lighthouse.txt" and "1872" in first["content"]
    keys = [(s["documentId"], s["chunkIndex"]) for s in answer.sources]
    assert len(keys) == len(set(keys))
    # the events arrive in the seed's order: progress, answer, sources, then [DONE]
    assert [e["type"] for e in answer.events][-1] == "sources"


@pytest.mark.parametrize(
    ("language", "question", "expected"),
    [
        ("ja", "緑茶の生産量が多い県は？", "静岡"),
        ("zh", "大熊猫吃什么？", "竹子"),
        ("en", "rye bread oven", "wood-fired"),
    ],
)
def test_progress_and_framing_in_the_users_language(user, language, question, expected):
    answer = ask(user.client, question, language=language)
    assert answer.progress == progress(language), answer.events
    assert expected in answer.text and answer.sources


def test_saved_language_applies_when_the_request_names_none(rest):
    user = rest.new_user()
    load_documents(user, {"tea.txt": "緑茶は日本で最も一般的なお茶です。"})
    assert user.client.put("/user-settings", json={"language": "ja"}).status_code == 200
    answer = ask(user.client, "緑茶")
    assert answer.progress == progress("ja")


UNANSWERED = {
    "en": "quantum chromodynamics gluon",
    "ja": "量子色力学のグルーオンとは？",
    "zh": "量子色动力学胶子",
}


def test_nothing_over_the_threshold_abstains_in_the_questions_language(user):
    for language, question in UNANSWERED.items():
        answer = ask(user.client, question, language=language)
        assert answer.done and not answer.errors
        assert answer.progress == [SEARCHING[language]]
        assert answer.text == NOTHING_FOUND[language]
        assert answer.sources == []
        assert FOUND[language] not in [e["data"] for e in answer.events]


def test_an_english_question_is_answered_in_english_under_a_japanese_ui(user):
    """Progress follows the user's language (the interface); the answer, the question's."""
    answer = ask(user.client, "When was the lighthouse built?", language="ja")
    assert answer.progress == progress("ja")
    assert "1872" in answer.text and not re.search(r"[\u3040-\u30ff]", answer.text)
    nothing = ask(user.client, UNANSWERED["en"], language="ja")
    assert nothing.text == NOTHING_FOUND["en"]


def test_threshold_from_user_settings(rest):
    user = rest.new_user()
    load_documents(user)
    assert user.client.put("/user-settings", json={"similarityThreshold": 0}).status_code == 200
    loose = ask(user.client, "lighthouse bakery bread museum").sources
    # similarity is absolute (calibrated), so the cut is taken from the scores themselves:
    # just under the best source's, which the weaker sources fall below.
    best = max(s["score"] for s in loose)
    assert best > min(s["score"] for s in loose)
    cut = round(best - 1e-5, 5)
    assert user.client.put("/user-settings", json={"similarityThreshold": cut}).status_code == 200
    strict = ask(user.client, "lighthouse bakery bread museum").sources
    assert 0 < len(strict) < len(loose)
    assert all(s["score"] >= cut for s in strict)


def test_follow_up_is_searched_with_its_context(user):
    history = [
        {"role": "user", "content": "Tell me about the Kessock lighthouse."},
        {"role": "assistant", "content": "It was built in 1872 [1]."},
    ]
    alone = ask(user.client, "And what happened in 2023?")
    followed = ask(user.client, "And what happened in 2023?", history=history)
    assert followed.sources and followed.sources[0]["fileName"] == "lighthouse.txt"
    assert "museum" in followed.text
    assert alone.sources == [] or "museum" in alone.text  # alone it has less to go on


def test_top_k_limits_sources(rest):
    user = rest.new_user()
    load_documents(
        user, {f"doc{i}.txt": f"Harbour note {i}: the harbour is busy." for i in range(6)}
    )
    assert (
        user.client.put("/user-settings", json={"topK": 2, "similarityThreshold": 0}).status_code
        == 200
    )
    assert len(ask(user.client, "harbour busy").sources) == 2


def test_bad_requests_are_400_and_anonymous_401(rest, user):
    for body in (
        {},
        {"message": ""},
        {"message": "hi", "userLanguage": "fr"},
        {"message": "hi", "history": [{"role": "system", "content": "x"}]},
    ):
        assert_error(user.client.post("/chat/stream", json=body), 400)
    with rest.client() as anonymous:
        assert_error(anonymous.post("/chat/stream", json={"message": "hi"}), 401)


def test_full_text_search_off_means_vector_only(rest):
    # This server has no embedding model, so vector-only search finds nothing: abstain.
    user = rest.new_user()
    load_documents(user)
    assert ask(user.client, "lighthouse museum").sources
    update = user.client.put("/user-settings", json={"enableFullTextSearch": False})
    assert update.status_code == 200
    answer = ask(user.client, "lighthouse museum", language="en")
    assert answer.sources == [] and answer.text == NOTHING_FOUND["en"]
