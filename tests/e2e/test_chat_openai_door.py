"""/v1/chat/completions and /v1/models with the official `openai` Python client against a
real Bunko server: streaming and not, the offline answerer and a real llama.cpp model,
sources in the extra field and as numbered citations, API keys and errors."""

from __future__ import annotations

import json
from itertools import pairwise

import openai
import pytest

from tests.e2e.chat_harness import load_documents
from tests.e2e.rest_harness import assert_error
from tests.llama_server import MODEL_NAME, llama_server
from tests.security.servers import raw_exchange, status_of


@pytest.fixture(scope="module")
def door_user(rest):
    user = rest.new_user()
    load_documents(user)
    return user


def client_for(rest, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=rest.url + "/v1", api_key=token, max_retries=0)


QUESTION = [{"role": "user", "content": "When was the lighthouse built?"}]


def test_streams_a_cited_answer_with_sources(rest, door_user):
    client = client_for(rest, door_user.token)
    stream = client.chat.completions.create(
        model="bunko-extractive", messages=QUESTION, stream=True
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "1872" in text and "[1]" in text and "Sources:\n[1] lighthouse.txt" in text
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    sources = last.model_extra["sources"]
    assert sources[0]["fileName"] == "lighthouse.txt" and "1872" in sources[0]["content"]
    assert len({c.id for c in chunks}) == 1


def test_non_stream_answer_and_models(rest, door_user):
    client = client_for(rest, door_user.token)
    completion = client.chat.completions.create(model="bunko-extractive", messages=QUESTION)
    content = completion.choices[0].message.content
    assert "1872" in content and "shore. [1]" in content
    assert completion.model_extra["sources"][0]["fileName"] == "lighthouse.txt"
    assert [m.id for m in client.models.list()] == ["bunko-extractive"]


def test_history_from_earlier_messages(rest, door_user):
    client = client_for(rest, door_user.token)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Tell me about the Kessock lighthouse."},
        {"role": "assistant", "content": "It was built in 1872 [1]."},
        {"role": "user", "content": "And what happened in 2023?"},
    ]
    completion = client.chat.completions.create(model="bunko-extractive", messages=messages)
    assert "museum" in completion.choices[0].message.content


def assert_openai_error(response, status: int, code: str | None = None) -> str:
    """OpenAI's error body, which its SDKs read: {"error": {message, type, param, code}}."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["message"] and "Traceback" not in response.text
    assert body["error"]["code"] == code
    return body["error"]["message"]


def test_api_key_works_and_errors_come_in_openais_shape(rest, door_user):
    workspace = rest.services.identity.authenticate(door_user.token).workspace_id
    _, key = rest.services.apikeys.create(workspace_id=workspace, scopes=("kb:read",))
    completion = client_for(rest, key).chat.completions.create(
        model="bunko-extractive", messages=QUESTION
    )
    assert completion.model_extra["sources"]
    # The SDK raises with the server's message, not only "Error code: 404".
    with pytest.raises(openai.AuthenticationError) as unauthenticated:
        client_for(rest, "not-a-key").models.list()
    assert unauthenticated.value.code == "invalid_api_key"
    with pytest.raises(openai.NotFoundError) as missing:
        client_for(rest, key).chat.completions.create(model="no-such-model", messages=QUESTION)
    assert "'no-such-model' not found: GET /v1/models lists the models" in str(missing.value)
    assert missing.value.code == "not_found" and missing.value.type == "invalid_request_error"
    with pytest.raises(openai.BadRequestError, match="messages"):
        client_for(rest, key).chat.completions.create(model="bunko-extractive", messages=[])
    message = assert_openai_error(
        door_user.client.post("/v1/chat/completions", json={"model": "x", "messages": []}), 400
    )
    assert "messages" in message
    assistant_last = [{"role": "assistant", "content": "hi"}]
    body = {"model": "bunko-extractive", "messages": assistant_last}
    message = assert_openai_error(door_user.client.post("/v1/chat/completions", json=body), 400)
    assert "the last message must be the user's question" in message
    # A body over the limit is refused before it is read, in the door's shape too.
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {rest.url.removeprefix('http://')}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {200 * 2**20}\r\n\r\n"
    ).encode()
    refused = raw_exchange(rest.url, head, b"{}")
    assert status_of(refused) == 413
    body = json.loads(refused.partition(b"\r\n\r\n")[2])
    assert body["error"]["code"] == "request_too_large" and body["error"]["message"]
    # Bunko's other routes keep aurak's shape.
    assert_error(door_user.client.get("/knowledge-bases/no-such-id"), 404)


@pytest.mark.slow  # llama.cpp with a GGUF chat model
def test_streams_from_a_llama_cpp_model_selected_by_name(rest):
    user = rest.new_user()
    load_documents(user)
    with llama_server() as llama:
        config = {
            "name": "smol",
            "provider": "local",
            "modelId": MODEL_NAME,
            "type": "llm",
            "baseUrl": llama.url,
        }
        config_id = user.client.post("/model-configs", json=config).json()["id"]
        client = client_for(rest, user.token)
        assert [m.id for m in client.models.list()] == ["bunko-extractive", config_id]
        stream = client.chat.completions.create(
            model="smol", messages=QUESTION, stream=True, max_tokens=12, temperature=0
        )
        chunks = list(stream)
        answer = "".join(c.choices[0].delta.content or "" for c in chunks)
        assert answer.strip() and "Sources:\n[1] lighthouse.txt" in answer
        assert chunks[-1].model_extra["sources"]
        assert llama.slot()["params"]["max_tokens"] == 12


@pytest.mark.slow  # llama.cpp with a GGUF chat model
def test_provider_failure_in_a_stream_raises_in_the_client(rest):
    user = rest.new_user()
    load_documents(user)
    with llama_server(api_key="right") as llama:
        config = {
            "name": "locked",
            "provider": "local",
            "modelId": MODEL_NAME,
            "type": "llm",
            "baseUrl": llama.url,
            "apiKey": "wrong",
        }
        assert user.client.post("/model-configs", json=config).status_code == 201
        client = client_for(rest, user.token)
        with pytest.raises(openai.APIError, match="apiKey"):
            list(client.chat.completions.create(model="locked", messages=QUESTION, stream=True))
        with pytest.raises(openai.APIStatusError) as refused:
            client.chat.completions.create(model="locked", messages=QUESTION)
        assert refused.value.status_code == 502


def test_content_parts_are_held_to_the_chat_limits(rest, door_user):
    """Issue 33: a question sent as OpenAI content parts had no limit (a 3 MB one reached the
    embedder); every form of a message is held to /chat/stream's: the question 8,000
    characters, an earlier turn 32,000."""

    def parts(text: str, pieces: int = 1) -> list[dict]:
        cuts = [len(text) * i // pieces for i in range(pieces + 1)]
        return [{"type": "text", "text": text[a:b]} for a, b in pairwise(cuts)]

    def post(messages: list[dict]):
        body = {"model": "bunko-extractive", "messages": messages}
        return door_user.client.post("/v1/chat/completions", json=body)

    largest = "lighthouse " * 727 + "x"  # 7,998 characters
    assert len(largest) <= 8000
    assert post([{"role": "user", "content": parts(largest, 4)}]).status_code == 200
    over = "a" * 8001
    message = assert_openai_error(post([{"role": "user", "content": parts(over, 3)}]), 400)
    assert "at most 8000 characters" in message
    huge = "a" * 3_000_000
    assert_openai_error(post([{"role": "user", "content": parts(huge, 100)}]), 400)
    assert_openai_error(post([{"role": "user", "content": parts("a" * 200, 101)}]), 400)
    long_turn = [{"role": "assistant", "content": parts("b" * 32_001, 2)}]
    assert_openai_error(post([*long_turn, {"role": "user", "content": "hi"}]), 400)
