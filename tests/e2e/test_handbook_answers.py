"""A team's own library (issue 45): a small company handbook in English and Japanese, asked
over /chat/stream on a real server with the default model. A question the handbook answers is
answered from the right file; a question on the handbook's own topic that no file answers
("Can I bring my dog to the office?" over a library about offices and leave) is refused, not
answered from the nearest file. With a chat model configured, the prompt tells it to say so,
and an answer that says so keeps no sources."""

from __future__ import annotations

import mimetypes

import pytest

from bunko.services.chat.chat_text import NOT_ANSWERED
from tests.e2e.chat_harness import ask
from tests.e2e.handbook import (
    ANSWERED,
    FILES,
    NOT_SAID,
    assert_answered_from,
    assert_refused,
)
from tests.e2e.recording_llm import recording_llm
from tests.e2e.rest_harness import wait_until_done

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"embedder": "use"}


@pytest.fixture(scope="module")
def handbook_reader(rest):
    user = rest.new_user()
    for path in sorted(FILES.iterdir()):
        kind = mimetypes.guess_type(path.name)[0] or "text/plain"
        response = user.client.post("/upload", files={"file": (path.name, path.read_bytes(), kind)})
        assert response.status_code == 201, response.text
        assert wait_until_done(user.client, response.json()["id"])["status"] == "completed"
    return user


@pytest.mark.parametrize(("question", "language", "file"), ANSWERED)
def test_what_the_handbook_says_is_answered_from_its_file(
    handbook_reader, question, language, file
):
    assert_answered_from(handbook_reader.client, question, language, file)


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
