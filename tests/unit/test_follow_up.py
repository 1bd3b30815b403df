"""Which questions continue a conversation (services/chat/follow_up.py): the cases a person meets,
in English, Japanese and Chinese; the rates over whole evaluation sets are in
tests/bench/bench_follow_up.py."""

from __future__ import annotations

import pytest

from bunko.ports.chat import ChatMessage
from bunko.services.chat.chat_text import question_language
from bunko.services.chat.follow_up import continues, retrieval_query

FOLLOW_UPS = [
    "And how much came from the grant?",
    "and in 2023?",
    "What about Tokyo?",
    "When was it built?",
    "Who manages them?",
    "Is that still true?",
    "How long is it?",
    "それで、費用は？",
    "その理由は？",
    "東京は？",
    "那么价格呢？",
    "它在哪里？",
    "¿Y en 2023?",
    "Und wer leitet das Projekt?",
]
NEW_TOPICS = [
    "What is the capital of France?",
    "What is the meal allowance outside Europe?",
    "Which region had the highest sales in 2024, and who manages it?",
    "What is the code word for the Tallinn warehouse door?",
    "When was the lighthouse built and by whom?",
    "出張の宿泊費の上限はいくらですか？",
    "梅雨の期間は？",
    "アムステルダムはどこの国の首都?",
    "静岡県の緑茶の生産量は？",
    "Wie hoch ist das Budget der Restaurierung?",
]


@pytest.mark.parametrize("question", FOLLOW_UPS)
def test_a_follow_up_is_taken_for_one(question):
    assert continues(question)


@pytest.mark.parametrize("question", NEW_TOPICS)
def test_a_whole_question_stands_alone(question):
    assert not continues(question)


def conversation(*questions: str) -> list[ChatMessage]:
    turns = []
    for question in questions:
        turns += [ChatMessage("user", question), ChatMessage("assistant", "… [1]")]
    return turns


def test_a_new_topic_is_searched_as_in_a_fresh_conversation():
    history = conversation("What is the code word for the Tallinn warehouse door?")
    assert retrieval_query("What is the capital of France?", history) == (
        "What is the capital of France?"
    )


def test_a_follow_up_is_searched_with_the_question_that_set_the_topic():
    history = conversation(
        "What is the code word for the Tallinn warehouse door?",
        "What does the lighthouse report say about the budget?",
        "And how much came from the grant?",
    )
    assert retrieval_query("And when was it built?", history) == (
        "What does the lighthouse report say about the budget?\n"
        "And how much came from the grant?\nAnd when was it built?"
    )
    assert retrieval_query("and in 2023?", []) == "and in 2023?"  # nothing to lean on


@pytest.mark.parametrize(
    ("question", "saved", "framed"),
    [
        ("When was the lighthouse built?", "ja", "en"),  # an English question, a Japanese UI
        ("灯台はいつ建てられましたか？", "en", "ja"),
        ("大熊猫吃什么？", "en", "zh"),
        ("緑茶生産量", "ja", "ja"),  # Han alone: the Japanese user's Japanese
        ("緑茶生産量", "zh", "zh"),
        ("2023?", "zh", "zh"),  # nothing to tell by: the saved language
    ],
)
def test_the_answer_is_framed_in_the_questions_language(question, saved, framed):
    assert question_language(question, saved) == framed
