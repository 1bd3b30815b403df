"""Issue 33 point 2, where outbound calls go: a model endpoint that answers with a redirect
to 127.0.0.1 (a service on the server's loopback, here a canary that counts what reaches
it) is not followed, by the embeddings, chat or rerank client; a model config's host name
is checked where it resolves when the config is saved and again at every request, so a
name that resolves to loopback (where private endpoints are refused) or moves to a
link-local address (instance metadata) after the workspace chose the model reaches nothing."""

from __future__ import annotations

import pytest

from bunko.adapters.http_rerank import HttpRerank
from bunko.adapters.openai_chat import OpenAIChat
from bunko.errors import ValidationError
from bunko.ports.chat import ChatMessage, ChatRequest, ProviderError
from bunko.services.embedding.endpoint_guard import resolve
from tests.e2e.rest_harness import assert_error, serve
from tests.security.hostile_models import HostileModels, choose
from tests.waiting import wait_for


@pytest.fixture
def redirect():
    """A canary on loopback, and an endpoint that redirects every request to it."""
    with HostileModels() as canary, HostileModels("redirect", redirect_to=canary.url) as bad:
        yield bad, canary


def test_an_embeddings_redirect_is_not_followed(fresh_rest, redirect):
    endpoint, canary = redirect
    refused = choose(fresh_rest.new_user(), endpoint.base)
    assert "redirect" in assert_error(refused, 400)["message"]
    assert endpoint.requests == 1 and canary.requests == 0


def test_a_chat_redirect_is_not_followed(redirect):
    endpoint, canary = redirect
    model = OpenAIChat(provider="p", model="m", api_key="secret", base_url=endpoint.base)
    with pytest.raises(ProviderError, match="redirect"):
        list(model.stream(ChatRequest(messages=[ChatMessage("user", "hi")])))
    assert endpoint.requests == 1 and canary.requests == 0


def test_a_rerank_redirect_is_not_followed(redirect):
    endpoint, canary = redirect
    reranker = HttpRerank(provider="p", model="m", base_url=endpoint.base, api_key="secret")
    with pytest.raises(ProviderError, match="redirect"):
        reranker.rerank("q", ["a", "b"], 1)
    assert endpoint.requests == 1 and canary.requests == 0


def test_a_name_for_loopback_is_refused_where_private_endpoints_are(tmp_path):
    with serve(tmp_path / "data", allow_private_model_endpoints=False) as fresh_rest:
        user = fresh_rest.new_user()
        body = {"name": "n", "provider": "local", "modelId": "m", "type": "embedding"}
        for url in ("http://localhost:11434/v1", "http://127.0.0.1:11434/v1"):
            refused = user.client.post("/model-configs", json={**body, "baseUrl": url})
            assert "inside the network" in assert_error(refused, 400)["message"]


def test_a_name_that_moves_to_link_local_is_refused_at_the_next_request(fresh_rest):
    """The workspace chose the model while its name resolved to loopback (allowed on one
    machine); then the name resolves to instance metadata. The embedder that serves the
    workspace is kept for the process's life: it must check again at every request."""
    where = {"localhost": "127.0.0.1"}
    resolver = lambda host, port: [where[host]] if host in where else resolve(host, port)  # noqa: E731
    fresh_rest.services.accounts.model_configs.resolver = resolver
    fresh_rest.services.model_switch.generations.opener.configs.resolver = (
        resolver  # what embeds reads
    )
    user = fresh_rest.new_user()
    with HostileModels() as endpoint:
        assert choose(user, endpoint.base.replace("127.0.0.1", "localhost")).status_code == 200
        switch = fresh_rest.services.accounts.model_switch
        wait_for(lambda: user.client.get("/embedding-model").json()["building"] is None)
        workspace = fresh_rest.services.identity.authenticate(user.token).workspace_id
        serving = switch.generations.serving(workspace).embedder
        assert serving.embed_query("still here").shape == (8,)
        seen = endpoint.requests

        where["localhost"] = "169.254.169.254"
        with pytest.raises(ValidationError, match="link-local"):
            serving.embed_query("now elsewhere")
        assert endpoint.requests == seen
