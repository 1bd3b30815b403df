"""A conversation of six questions on three topics, over a real server (issue 31): two real
follow-ups are searched with the question that set their topic, a new topic is searched as
in a fresh conversation, and a question nothing answers gets "nothing found" though the
conversation before it was about something else. Offline answerer, then a configured LLM
(llama.cpp with SmolLM2, as in test_chat_llama)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bunko.services.chat.chat_text import NOTHING_FOUND
from tests.e2e.chat_harness import ask, load_documents
from tests.llama_server import MODEL_NAME, llama_server

LIBRARY = Path(__file__).resolve().parents[1] / "data" / "first_library"
DOCUMENTS = {
    "harbor.txt": (LIBRARY / "harbor.txt").read_text(encoding="utf-8"),
    "sado.txt": (LIBRARY / "sado.txt").read_text(encoding="utf-8"),
    "travel-policy.txt": (
        "Travel policy\n\n"
        "Employees travelling on company business are reimbursed for meals at a daily "
        "allowance. Inside Europe the meal allowance is 45 euros a day; outside Europe it is "
        "60 euros a day. Hotel nights are booked through the travel desk, up to 150 euros a "
        "night in capital cities and 110 euros elsewhere.\n\n"
        "Trains are preferred to flights for journeys under four hours. Receipts are "
        "submitted within thirty days of the trip's end."
    ),
}
# (question, the file its sources must come from; None: nothing may be found)
CONVERSATION = [
    ("When was Harbor Point Lighthouse first lit?", "harbor.txt"),
    ("And how much did the restoration cost?", "harbor.txt"),  # follow-up
    ("What is the meal allowance outside Europe?", "travel-policy.txt"),  # new topic
    ("茶道を大成したのは誰ですか？", "sado.txt"),  # new topic, in Japanese
    ("その茶室の入口は何と呼ばれますか？", "sado.txt"),  # follow-up
    ("Who painted the Mona Lisa?", None),  # nothing in the library answers it
]
EXPECTED = {0: "1872", 1: "1.4 million", 2: "60 euros", 3: "千利休", 4: "にじり口"}


def converse(client) -> list:
    history, answers = [], []
    for question, _ in CONVERSATION:
        answer = ask(client, question, history=history)
        assert answer.done and not answer.errors, answer.events
        answers.append(answer)
        history += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer.text},
        ]
    return answers


def assert_new_topics_retrieve_as_if_asked_first(client, answers) -> None:
    """A question that starts a topic gets the sources it gets in a fresh conversation."""
    for turn in (0, 2, 3, 5):
        fresh = ask(client, CONVERSATION[turn][0])
        assert [s["content"] for s in fresh.sources] == [
            s["content"] for s in answers[turn].sources
        ], CONVERSATION[turn][0]


def assert_sources_stay_on_topic(answers) -> None:
    for (question, topic), answer in zip(CONVERSATION, answers, strict=True):
        files = {s["fileName"] for s in answer.sources}
        if topic is None:
            assert files == set(), (question, files)
        else:
            assert files == {topic}, (question, files)


def test_offline_each_question_keeps_to_its_own_topic(rest):
    user = rest.new_user()
    load_documents(user, DOCUMENTS)
    answers = converse(user.client)
    assert_sources_stay_on_topic(answers)
    assert_new_topics_retrieve_as_if_asked_first(user.client, answers)
    for turn, expected in EXPECTED.items():
        assert expected in answers[turn].text, (CONVERSATION[turn][0], answers[turn].text)
    assert answers[-1].text == NOTHING_FOUND["en"]


@pytest.mark.slow  # llama.cpp with a GGUF chat model
def test_with_a_configured_llm_each_question_keeps_to_its_own_topic(rest):
    user = rest.new_user()
    load_documents(user, DOCUMENTS)
    with llama_server() as llama:
        config = user.client.post("/model-configs", json={
            "name": "smol", "provider": "local", "modelId": MODEL_NAME, "type": "llm",
            "baseUrl": llama.url,
        })  # fmt: skip
        assert config.status_code == 201, config.text
        settings = {"selectedLLMId": config.json()["id"], "maxTokens": 24, "temperature": 0}
        assert user.client.put("/user-settings", json=settings).status_code == 200
        answers = converse(user.client)
    assert_sources_stay_on_topic(answers)
    assert all(a.text.strip() for a in answers)
    assert answers[-1].text == NOTHING_FOUND["en"]  # no model was called for it
