"""/chat/stream with an OpenAI-compatible provider: a real llama.cpp server (xllamacpp) with
SmolLM2-135M, called through Bunko's `openai` SDK adapter. A bad key is an error event then
[DONE]; a client that disconnects stops the generation on the model server."""

from __future__ import annotations

import json

import pytest
from httpx_sse import connect_sse

from tests.e2e.chat_harness import PROGRESS, ask, load_documents
from tests.llama_server import MODEL_NAME, llama_server
from tests.waiting import wait_for

pytestmark = pytest.mark.slow  # llama.cpp with a GGUF chat model

KEY = "llama-test-key"
MAX_TOKENS = 3000


@pytest.fixture(scope="module")
def llama():
    # ignore_eos: every answer runs to maxTokens, so a stopped generation is visible.
    with llama_server(api_key=KEY, ignore_eos=True) as server:
        yield server


def llm_user(rest, llama, *, api_key=KEY, max_tokens=16, temperature=0.2):
    user = rest.new_user()
    load_documents(user)
    config = user.client.post(
        "/model-configs",
        json={
            "name": "smol",
            "provider": "local",
            "modelId": MODEL_NAME,
            "type": "llm",
            "baseUrl": llama.url,
            "apiKey": api_key,
        },
    )
    assert config.status_code == 201, config.text
    settings = {
        "selectedLLMId": config.json()["id"],
        "maxTokens": max_tokens,
        "temperature": temperature,
    }
    assert user.client.put("/user-settings", json=settings).status_code == 200
    return user


def test_answer_streams_from_the_model_server(rest, llama):
    user = llm_user(rest, llama)
    answer = ask(user.client, "When was the lighthouse built?")
    assert answer.done and not answer.errors, answer.errors
    assert len(answer.progress) == 2 and answer.text.strip()
    assert answer.sources and answer.sources[0]["fileName"] == "lighthouse.txt"
    # the model server ran the request with the user's saved settings
    params = llama.slot()["params"]
    assert params["max_tokens"] == 16 and abs(params["temperature"] - 0.2) < 1e-6
    # several deltas arrived as separate events, not one buffered blob
    assert sum(1 for e in answer.events if e["type"] == "content") > 4


def test_bad_key_is_an_error_event_naming_the_provider_then_done(rest, llama):
    user = llm_user(rest, llama, api_key="wrong-key")
    answer = ask(user.client, "When was the lighthouse built?")
    assert answer.done and answer.sources is None
    assert len(answer.errors) == 1
    assert "local (smol)" in answer.errors[0] and "apiKey" in answer.errors[0]


def test_client_disconnect_stops_generation(rest, llama):
    user = llm_user(rest, llama, max_tokens=MAX_TOKENS)
    # A question the knowledge base answers (over the threshold), so the model is called.
    body = {"message": "When was the lighthouse built?", "history": []}
    deltas = 0
    with connect_sse(user.client, "POST", "/chat/stream", json=body) as source:
        for sse in source.iter_sse():
            assert sse.data != "[DONE]", "the answer ended before the client could leave"
            event = json.loads(sse.data)
            if event["type"] == "content" and event["data"] not in PROGRESS:
                deltas += 1
            if deltas == 3:
                break  # leaving the block closes the connection mid-answer
    decoded = []

    def stopped():
        slot = llama.slot()
        if slot["is_processing"]:
            decoded.append(slot["next_token"][0]["n_decoded"])
            return None
        return True

    wait_for(stopped, 300, interval=0.1)
    # Had it run on, the server would have decoded all MAX_TOKENS (EOS is ignored); it
    # stopped soon after the client left.
    assert llama.slot()["params"]["max_tokens"] == MAX_TOKENS
    assert not decoded or decoded[-1] < MAX_TOKENS // 3, decoded
