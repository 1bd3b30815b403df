"""The model endpoints' clients (`bounded_client`: the OpenAI embedder, chat, reranker)
behind the proxy the environment names: httpx leaves the environment out for a client
given its own transport, so an operator behind a proxy reached no model. Now a request
goes through the proxy (with its login), a host NO_PROXY lists is reached directly, and
the guard still sees the endpoint's own URL."""

from __future__ import annotations

import base64
from urllib.parse import urlsplit

from bunko.adapters.bounded_http import bounded_client
from bunko.adapters.http_rerank import HttpRerank
from bunko.adapters.openai_chat import OpenAIChat
from bunko.ports.chat import ChatMessage, ChatRequest
from tests.e2e.forward_proxy import forward_proxy
from tests.security.hostile_models import HostileModels

REQUEST = ChatRequest(messages=[ChatMessage("user", "hello")], max_tokens=50)


def test_model_calls_go_through_the_proxy_the_environment_names(monkeypatch):
    with forward_proxy(monkeypatch) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://ops:pa%3Ass@{urlsplit(proxy.url).netloc}")
        with HostileModels() as endpoint:
            chat = OpenAIChat(provider="p", model="m", api_key=None, base_url=endpoint.base)
            assert list(chat.stream(REQUEST)) == ["fine"]
            rerank = HttpRerank(provider="p", model="m", base_url=endpoint.base, api_key=None)
            assert [h.index for h in rerank.rerank("q", ["a", "b", "c"], 2)] == [0, 1]
            assert [(method, url) for method, url, _ in proxy.log] == [
                ("POST", f"{endpoint.base}/chat/completions"),
                ("POST", f"{endpoint.base}/rerank"),
            ]
            assert endpoint.requests == 2
            login = "Basic " + base64.b64encode(b"ops:pa:ss").decode()
            assert {auth for _, _, auth in proxy.log} == {login}

            monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # then reached directly
            assert list(chat.stream(REQUEST)) == ["fine"]
            assert len(proxy.log) == 2 and endpoint.requests == 3


def test_behind_a_proxy_the_guard_sees_the_endpoint(monkeypatch):
    with forward_proxy(monkeypatch) as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        seen: list[str] = []
        with HostileModels() as endpoint:
            http = bounded_client(max_bytes=1 << 20, max_seconds=30, timeout=30, guard=seen.append)
            with http:
                answer = http.post(
                    f"{endpoint.base}/rerank", json={"query": "q", "documents": ["a"]}
                )
            assert answer.status_code == 200
        assert seen == [f"{endpoint.base}/rerank"]
        assert [url for _, url, _ in proxy.log] == seen
