"""The model endpoints' clients (`bounded_client`: the OpenAI embedder, chat, reranker)
behind the proxy the environment names: httpx leaves the environment out for a client
given its own transport, so an operator behind a proxy reached no model. Now a request
goes through the proxy (with its login), a host NO_PROXY lists is reached directly, and
the guard still sees the endpoint's own URL: it refuses a literal address and a name that
resolves inside the network here, and leaves a name it cannot resolve to the proxy."""

from __future__ import annotations

import base64
from urllib.parse import urlsplit

import pytest

from bunko.adapters.bounded_http import bounded_client, proxy_for
from bunko.adapters.http_rerank import HttpRerank
from bunko.adapters.openai_chat import OpenAIChat
from bunko.adapters.openai_embedder import OpenAIEmbedder
from bunko.errors import ValidationError
from bunko.ports.chat import ChatMessage, ChatRequest
from bunko.services.embedding import check_model_endpoint, check_public_endpoint
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


def _guarded_embedder(base_url: str) -> OpenAIEmbedder:
    """A model config's embedder as the server builds it: the guard before every request,
    private endpoints refused."""
    return OpenAIEmbedder(
        base_url=base_url,
        model="m",
        max_attempts=1,
        guard=lambda url: check_model_endpoint(url, allow_private=False),
    )


def test_behind_a_proxy_the_guard_still_refuses_what_it_can_see(monkeypatch):
    """The proxy would resolve and connect: a literal address inside the network, and a name
    that resolves inside it here, are refused before any request reaches the proxy."""
    with forward_proxy(monkeypatch) as proxy, HostileModels() as endpoint:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        port = urlsplit(endpoint.url).port
        for host in ("127.0.0.1", "localhost", "169.254.169.254", "[::1]"):
            with pytest.raises(ValidationError, match="inside the network"):
                _guarded_embedder(f"http://{host}:{port}/v1").embed_documents(["a"])
        assert proxy.log == [] and endpoint.requests == 0


def test_a_name_only_the_proxy_resolves_is_reached_through_it(monkeypatch):
    """With a proxy, the proxy resolves: a name this machine cannot resolve is not refused
    for that (the deployment's own endpoint too), and the request reaches it."""
    with HostileModels() as endpoint:
        port = urlsplit(endpoint.url).port
        base = f"http://models.proxy-only.test:{port}/v1"  # .test never resolves (RFC 6761)
        names = {"models.proxy-only.test": "127.0.0.1"}
        with forward_proxy(monkeypatch, names) as proxy:
            settings = {"setting": "BUNKO_OPENAI_BASE_URL", "allow_switch": "S"}
            with pytest.raises(ValidationError, match="cannot resolve"):
                check_public_endpoint(base, **settings, allow_private=False)  # no proxy
            monkeypatch.setenv("HTTP_PROXY", proxy.url)
            assert proxy_for(base) == proxy.url
            assert check_public_endpoint(base, **settings, allow_private=False, proxied=True)
            vectors = _guarded_embedder(base).embed_documents(["a", "b"])
            assert len(vectors) == 2 and endpoint.requests >= 1
            assert {url.rsplit("/", 1)[0] for _, url, _ in proxy.log} == {base}
