"""Issue 46, finding 6 (the keys of one library): each API key has a conversation pool of its
own, and its chats in progress count against the person who made it. Before, the keys of a
library shared one pool and one count: a viewer's key read and deleted the owner's agent's
conversation, and held every chat slot so that the owner's agent got 429."""

from __future__ import annotations

import threading

import openai
import pytest

from tests.e2e.rest_harness import assert_error, wait_until_done
from tests.security.gated_llm import gated_llm
from tests.waiting import wait_for

QUESTION = "What does the keeper trim at the lighthouse?"
DOCUMENT = b"The Kessock lighthouse keeper trims the lamp every night."


@pytest.fixture
def shared_library(rest):
    owner, viewer = rest.new_user(), rest.new_user()
    library_id = owner.client.post("/libraries", json={"name": f"t-{owner.username}"}).json()["id"]
    owner.client.put(f"/libraries/{library_id}/members",
                     json={"username": viewer.username, "role": "viewer"})  # fmt: skip
    for person in (owner, viewer):
        person.client.headers["X-Bunko-Library"] = library_id
    keys = {
        "owner": owner.client.post("/api-keys", json={"scopes": ["kb:read"]}).json()["key"],
        "viewer": viewer.client.post("/api-keys", json={"scopes": ["kb:read"]}).json()["key"],
    }
    return owner, viewer, keys


def test_a_viewers_key_cannot_read_or_delete_the_owners_agents_conversation(rest, shared_library):
    _, _, keys = shared_library
    with rest.client(keys["owner"]) as owners_agent, rest.client(keys["viewer"]) as viewers:
        made = owners_agent.post("/conversations", json={"title": "owner's plans"})
        assert made.status_code == 201, made.text
        conversation = made.json()["id"]
        assert viewers.get("/conversations").json() == []
        assert_error(viewers.get(f"/conversations/{conversation}"), 404)
        assert_error(viewers.delete(f"/conversations/{conversation}"), 404)
        assert [c["id"] for c in owners_agent.get("/conversations").json()] == [conversation]


def test_one_members_keys_cannot_take_the_chat_slots_another_members_agent_needs(
    rest, shared_library
):
    owner, _, keys = shared_library
    limit = rest.services.settings.chat_streams_per_user
    uploaded = owner.client.post("/upload", files={"file": ("lamp.txt", DOCUMENT, "text/plain")})
    assert wait_until_done(owner.client, uploaded.json()["id"])["status"] == "completed"
    with gated_llm() as llm:
        config = owner.client.post("/model-configs", json={
            "name": "gated", "provider": "local", "modelId": "gated", "type": "llm",
            "baseUrl": llm.url,
        })  # fmt: skip
        assert config.status_code == 201, config.text
        model = config.json()["id"]

        def door(key: str) -> openai.OpenAI:
            return openai.OpenAI(base_url=rest.url + "/v1", api_key=key, max_retries=0,
                                 timeout=90)  # fmt: skip

        def chat(key: str, results: list) -> None:
            try:
                stream = door(key).chat.completions.create(
                    model=model, messages=[{"role": "user", "content": QUESTION}], stream=True
                )
                results.append("".join(c.choices[0].delta.content or "" for c in stream))
            except Exception as exc:  # reported below
                results.append(exc)

        held: list = []
        threads = [threading.Thread(target=chat, args=(keys["viewer"], held), daemon=True)
                   for _ in range(limit)]  # fmt: skip
        for thread in threads:
            thread.start()
        wait_for(lambda: llm.started == limit, timeout=30)
        with pytest.raises(openai.RateLimitError):  # the viewer's own count is full
            door(keys["viewer"]).chat.completions.create(
                model=model, messages=[{"role": "user", "content": QUESTION}]
            )
        owners: list = []
        agent = threading.Thread(target=chat, args=(keys["owner"], owners), daemon=True)
        agent.start()
        wait_for(lambda: llm.started == limit + 1 or owners, timeout=30)
        llm.release(limit + 1)
        agent.join(timeout=90)
        for thread in threads:
            thread.join(timeout=90)
    assert owners and not isinstance(owners[0], BaseException), owners
    assert not [r for r in held if isinstance(r, BaseException)], held
