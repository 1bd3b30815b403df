"""Rerank over a Cohere/Jina-style `POST /rerank` endpoint: llama.cpp's server (xllamacpp)
serving /v1/rerank. With rerank on, the sources come in the order the endpoint ranks them,
with its scores; with rerank off, in search order."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.chat_harness import ask, load_documents
from tests.llama_server import MODEL_NAME, llama_server

pytestmark = pytest.mark.slow  # llama.cpp with a GGUF model

DOCUMENTS = {
    f"harbour{i}.txt": f"Harbour log {i}: {text}"
    for i, text in enumerate(
        [
            "the harbour master counted ships at dawn.",
            "fishing boats left the harbour before the storm.",
            "the harbour crane lifted timber all afternoon.",
            "a ferry crossed the harbour every hour.",
        ]
    )
}


@pytest.fixture(scope="module")
def reranker():
    with llama_server(rerank=True) as server:
        yield server


def test_rerank_on_follows_the_endpoint_and_off_keeps_search_order(rest, reranker):
    user = rest.new_user()
    load_documents(user, DOCUMENTS)
    config = {
        "name": "ranker",
        "provider": "local",
        "modelId": MODEL_NAME,
        "type": "rerank",
        "baseUrl": reranker.url,
    }
    rerank_id = user.client.post("/model-configs", json=config).json()["id"]
    settings = {"selectedRerankId": rerank_id, "similarityThreshold": 0, "topK": 3}
    assert user.client.put("/user-settings", json=settings).status_code == 200

    question = "harbour ships storm"
    plain = ask(user.client, question).sources
    assert len(plain) == 3

    assert user.client.put("/user-settings", json={"enableRerank": True}).status_code == 200
    reranked = ask(user.client, question).sources
    # What the endpoint itself says about every candidate (rerank sees topK x 3 of them).
    candidates = [s["content"] for s in ask_all(user, question)]
    ranked = httpx.post(
        reranker.url + "/rerank",
        json={"model": MODEL_NAME, "query": question, "documents": candidates, "top_n": 3},
        timeout=60,
    ).json()["results"]
    ranked.sort(key=lambda r: r["relevance_score"], reverse=True)
    assert [s["content"] for s in reranked] == [candidates[r["index"]] for r in ranked]
    assert [s["score"] for s in reranked] == [round(r["relevance_score"], 6) for r in ranked]
    # off: search's own order and numbers (sorted by similarity as shown, two decimals); on:
    # the endpoint's scores, whatever order the two happen to agree on
    shown = [round(s["score"], 2) for s in plain]
    assert shown == sorted(shown, reverse=True)
    assert [s["score"] for s in reranked] != [s["score"] for s in plain]


def ask_all(user, question):
    """The search candidates in search order (rerank off, topK large enough for them all)."""
    user.client.put("/user-settings", json={"enableRerank": False, "topK": 9})
    try:
        return ask(user.client, question).sources
    finally:
        user.client.put("/user-settings", json={"enableRerank": True, "topK": 3})
