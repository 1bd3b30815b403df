"""Issue 46, findings 2 and 3, replayed on a real server: an editor (or their key) cannot point
a shared library's model config or its embedding model at a server of their choosing, and
a config whose `baseUrl` or `provider` changes loses its stored key unless the same request
sends one, in every library (a personal one too), so a key given for one endpoint is never
sent to another."""

from __future__ import annotations

import pytest

from tests.e2e.chat_harness import ask
from tests.e2e.recording_llm import recording_llm
from tests.e2e.rest_harness import assert_error, wait_until_done

SECRET = "sk-owner-secret-0123456789"
POLICY = b"Travel policy. The meal allowance outside Europe is 60 euros a day."
QUESTION = "What is the meal allowance outside Europe?"


@pytest.fixture(scope="module")
def servers():
    with recording_llm() as owners, recording_llm() as attackers:
        yield owners, attackers


def _llm_config(client, url: str, key: str | None = SECRET) -> dict:
    made = client.post("/model-configs", json={
        "name": f"chat-{url[-10:]}", "provider": "openai", "modelId": "gpt-test", "type": "llm",
        "baseUrl": url, "apiKey": key,
    })  # fmt: skip
    assert made.status_code == 201, made.text
    return made.json()


def _with_policy(client) -> None:
    uploaded = client.post("/upload", files={"file": ("travel.txt", POLICY, "text/plain")})
    assert uploaded.status_code == 201, uploaded.text
    assert wait_until_done(client, uploaded.json()["id"])["status"] == "completed"


def test_an_editor_cannot_redirect_a_shared_librarys_model_or_its_embedding(rest, servers):
    owners_llm, attackers = servers
    owner, editor = rest.new_user(), rest.new_user()
    library_id = owner.client.post("/libraries", json={"name": f"team-{owner.username}"}).json()[
        "id"
    ]
    owner.client.put(f"/libraries/{library_id}/members",
                     json={"username": editor.username, "role": "editor"})  # fmt: skip
    for person in (owner, editor):
        person.client.headers["X-Bunko-Library"] = library_id
    config = _llm_config(owner.client, owners_llm.url)
    editors_key = editor.client.post("/api-keys", json={"scopes": ["kb:read", "kb:write"]})
    with rest.client(editors_key.json()["key"]) as agent:
        for caller in (editor.client, agent):
            moved = caller.put(f"/model-configs/{config['id']}", json={"baseUrl": attackers.url})
            assert "owners" in assert_error(moved, 403)["message"]
            assert_error(caller.post("/model-configs", json={
                "name": "mine", "provider": "openai", "modelId": "e", "type": "embedding",
                "baseUrl": attackers.url}), 403)  # fmt: skip
            assert_error(caller.delete(f"/model-configs/{config['id']}"), 403)
            # the library's embedding model, by either door
            chosen = caller.put("/embedding-model", json={"modelConfigId": config["id"]})
            assert_error(chosen, 403)
            by_settings = caller.put("/user-settings", json={"selectedEmbeddingId": config["id"]})
            assert_error(by_settings, 403)
            # a whole settings form that sends the current choice back still saves
            kept = caller.put("/user-settings", json={"selectedEmbeddingId": None, "topK": 7})
            assert kept.status_code == 200, kept.text
            assert caller.get("/model-configs").status_code == 200  # members read them
    stored = owner.client.get(f"/model-configs/{config['id']}").json()
    assert (stored["baseUrl"], stored["hasApiKey"]) == (owners_llm.url, True)
    assert owner.client.get("/embedding-model").json()["serving"]["modelConfigId"] is None
    assert attackers.authorizations == []


def test_a_new_base_url_drops_the_stored_key_unless_a_new_one_comes_with_it(rest, servers):
    owners_llm, attackers = servers
    user = rest.new_user()
    _with_policy(user.client)
    config = _llm_config(user.client, owners_llm.url)
    user.client.put("/user-settings", json={"selectedLLMId": config["id"]})
    assert ask(user.client, QUESTION).done
    assert owners_llm.authorizations[-1] == f"Bearer {SECRET}"
    # the user's own kb:write key moves the config: the key stays behind
    key = user.client.post("/api-keys", json={"scopes": ["kb:read", "kb:write"]}).json()["key"]
    with rest.client(key) as agent:
        moved = agent.put(f"/model-configs/{config['id']}", json={"baseUrl": attackers.url})
        assert moved.status_code == 200, moved.text
        assert moved.json()["hasApiKey"] is False
    assert ask(user.client, QUESTION).done
    assert attackers.authorizations and all(
        SECRET not in (a or "") for a in attackers.authorizations
    )
    # a provider change drops it too; a key sent with the move is kept
    back = user.client.put(f"/model-configs/{config['id']}",
                           json={"baseUrl": owners_llm.url, "apiKey": "sk-new"})  # fmt: skip
    assert back.json()["hasApiKey"] is True
    assert user.client.put(f"/model-configs/{config['id']}",
                           json={"provider": "gemini"}).json()["hasApiKey"] is False  # fmt: skip
    renamed = user.client.put(f"/model-configs/{config['id']}",
                              json={"apiKey": "sk-3", "provider": "openai"})  # fmt: skip
    assert renamed.json()["hasApiKey"] is True
    same = user.client.put(f"/model-configs/{config['id']}", json={"name": "renamed"})
    assert same.json()["hasApiKey"] is True  # nothing about the endpoint changed
