"""/v1/chat/completions and /v1/models with the official `openai` Python client against a
real Bunko server: streaming and not, the offline answerer and a real llama.cpp model,
sources in the extra field and as numbered citations, API keys and errors."""

from __future__ import annotations

import openai
import pytest

from tests.e2e.chat_harness import load_documents
from tests.e2e.rest_harness import assert_error, serve
from tests.llama_server import MODEL_NAME, llama_server


@pytest.fixture(scope="module")
def rest(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("chat-openai") / "data") as r:
        yield r


@pytest.fixture(scope="module")
def user(rest):
    user = rest.new_user()
    load_documents(user)
    return user


def client_for(rest, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=rest.url + "/v1", api_key=token, max_retries=0)


QUESTION = [{"role": "user", "content": "When was the lighthouse built?"}]


def test_streams_a_cited_answer_with_sources(rest, user):
    client = client_for(rest, user.token)
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


def test_non_stream_answer_and_models(rest, user):
    client = client_for(rest, user.token)
    completion = client.chat.completions.create(model="bunko-extractive", messages=QUESTION)
    content = completion.choices[0].message.content
    assert "1872" in content and "shore. [1]" in content
    assert completion.model_extra["sources"][0]["fileName"] == "lighthouse.txt"
    assert [m.id for m in client.models.list()] == ["bunko-extractive"]


def test_history_from_earlier_messages(rest, user):
    client = client_for(rest, user.token)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Tell me about the Kessock lighthouse."},
        {"role": "assistant", "content": "It was built in 1872 [1]."},
        {"role": "user", "content": "And what happened in 2023?"},
    ]
    completion = client.chat.completions.create(model="bunko-extractive", messages=messages)
    assert "museum" in completion.choices[0].message.content


def test_api_key_works_and_errors_keep_the_error_shape(rest, user):
    workspace = rest.services.identity.authenticate(user.token).workspace_id
    _, key = rest.services.apikeys.create(workspace_id=workspace, scopes=("kb:read",))
    completion = client_for(rest, key).chat.completions.create(
        model="bunko-extractive", messages=QUESTION
    )
    assert completion.model_extra["sources"]
    with pytest.raises(openai.AuthenticationError):
        client_for(rest, "not-a-key").models.list()
    with pytest.raises(openai.NotFoundError):
        client_for(rest, key).chat.completions.create(model="no-such-model", messages=QUESTION)
    assert_error(user.client.post("/v1/chat/completions", json={"model": "x", "messages": []}), 400)
    assistant_last = [{"role": "assistant", "content": "hi"}]
    body = {"model": "bunko-extractive", "messages": assistant_last}
    assert_error(user.client.post("/v1/chat/completions", json=body), 400)


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
