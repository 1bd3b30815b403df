"""Conversations kept on the server, over a real socket: /conversations (list, create, get,
rename, delete), POST /chat/stream with `conversationId` saving each question and its
finished answer with its sources (the stored history is what the model reads, whatever the
client sends as `history`), limits (400 / 413 / 429), retention, deleting the user, and a
restart on the same data folder."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from httpx_sse import connect_sse

from bunko.domain.conversations import DEFAULT_TITLE_CHARS
from tests.e2e.chat_harness import PROGRESS, load_documents
from tests.e2e.recording_llm import ANSWER, recording_llm
from tests.e2e.rest_harness import assert_error, serve

LIGHTHOUSE = {"lighthouse.txt": "The keeper trims the lamp of the Kessock lighthouse every night."}


def say(client: httpx.Client, message: str, conversation_id: str | None, **extra) -> dict:
    """POST /chat/stream; the answer's text (progress left out), sources and errors."""
    body = {"message": message, **extra}
    if conversation_id is not None:
        body["conversationId"] = conversation_id
    seen: dict = {"text": "", "sources": None, "errors": [], "done": False}
    with connect_sse(client, "POST", "/chat/stream", json=body) as source:
        assert source.response.status_code == 200, source.response.read()
        for sse in source.iter_sse():
            if sse.data == "[DONE]":
                seen["done"] = True
                break
            event = json.loads(sse.data)
            if event["type"] == "content" and event["data"] not in PROGRESS:
                seen["text"] += event["data"]
            elif event["type"] == "sources":
                seen["sources"] = event["data"]
            elif event["type"] == "error":
                seen["errors"].append(event["data"])
    return seen


def test_create_list_get_rename_and_delete(rest):
    client = rest.new_user().client
    assert client.get("/conversations").json() == []
    untitled = client.post("/conversations")
    assert untitled.status_code == 201, untitled.text
    first = untitled.json()
    assert first["title"] is None and first["messages"] == [] and first["messageCount"] == 0
    assert first["expiresAt"] is None  # kept until deleted by default
    second = client.post("/conversations", json={"title": "  Lighthouse notes "}).json()
    assert second["title"] == "Lighthouse notes"
    listed = client.get("/conversations").json()
    assert [c["id"] for c in listed] == [second["id"], first["id"]]  # most recent first
    assert all("messages" not in c for c in listed)
    assert [c["id"] for c in client.get("/conversations?limit=1&offset=1").json()] == [first["id"]]
    got = client.get(f"/conversations/{first['id']}")
    assert got.status_code == 200 and got.json() == first
    renamed = client.patch(f"/conversations/{first['id']}", json={"title": "灯台のこと"})
    assert renamed.status_code == 200 and renamed.json()["title"] == "灯台のこと"
    assert client.get(f"/conversations/{first['id']}").json()["title"] == "灯台のこと"
    deleted = client.delete(f"/conversations/{first['id']}")
    assert deleted.json() == {"message": "Conversation deleted", "id": first["id"]}
    assert_error(client.get(f"/conversations/{first['id']}"), 404)
    assert_error(client.delete(f"/conversations/{first['id']}"), 404)
    assert_error(client.patch(f"/conversations/{uuid.uuid4()}", json={"title": "x"}), 404)
    assert [c["id"] for c in client.get("/conversations").json()] == [second["id"]]


def test_chat_saves_each_turn_and_the_stored_history_wins(rest):
    user = rest.new_user()
    client = user.client
    load_documents(user, LIGHTHOUSE)
    with recording_llm() as llm:
        config = client.post("/model-configs", json={
            "name": "recorder", "provider": "local", "modelId": "recorder", "type": "llm",
            "baseUrl": llm.url,
        })  # fmt: skip
        assert config.status_code == 201, config.text
        client.put("/user-settings", json={"selectedLLMId": config.json()["id"]})
        conversation = client.post("/conversations").json()["id"]
        question = "Who trims the lamp of the lighthouse, and how often does it happen there?"
        first = say(client, question, conversation)
        assert first["done"] and not first["errors"] and first["text"] == "".join(ANSWER)
        kept = client.get(f"/conversations/{conversation}").json()
        assert kept["title"] == question[:DEFAULT_TITLE_CHARS].rsplit(" ", 1)[0] + "…"
        assert [(m["role"], m["content"]) for m in kept["messages"]] == [
            ("user", question), ("assistant", first["text"])
        ]  # fmt: skip
        assert kept["messages"][1]["sources"] == first["sources"] and first["sources"]
        assert kept["messages"][0]["sources"] == [] and not kept["messages"][1]["truncated"]
        assert kept["updatedAt"] == kept["messages"][1]["createdAt"]

        # the client's own history is ignored when a conversation is named: the model reads
        # the stored turns
        bogus = [{"role": "user", "content": "BOGUS-TURN"}]
        second = say(client, "And when?", conversation, history=bogus)
        assert second["done"] and not second["errors"]
        shown = [m["content"] for m in llm.requests[-1]]
        assert question in shown and first["text"] in shown
        assert not any("BOGUS-TURN" in text for text in shown)
        # without a conversation, history works as before and nothing is stored
        say(client, "Who trims the lamp?", None, history=bogus)
        assert any("BOGUS-TURN" in m["content"] for m in llm.requests[-1])
    kept = client.get(f"/conversations/{conversation}").json()
    assert kept["messageCount"] == 4
    assert [m["content"] for m in kept["messages"]][2:] == ["And when?", second["text"]]
    assert [c["id"] for c in client.get("/conversations").json()] == [conversation]


def test_chat_into_an_unknown_conversation_is_404_before_the_stream(rest):
    client = rest.new_user().client
    body = {"message": "hello", "conversationId": str(uuid.uuid4())}
    assert "not found" in assert_error(client.post("/chat/stream", json=body), 404)["message"]
    other = rest.new_user().client.post("/conversations").json()["id"]
    assert_error(client.post("/chat/stream", json={**body, "conversationId": other}), 404)


def test_limits_are_400_413_and_429(tmp_path, monkeypatch):
    monkeypatch.setenv("BUNKO_CONVERSATION_MAX_MESSAGES", "2")
    monkeypatch.setenv("BUNKO_CONVERSATION_MAX_PER_USER", "2")
    with serve(tmp_path / "data") as rest:
        client = rest.new_user().client
        too_long = client.post("/conversations", json={"title": "x" * 201})
        assert "title" in str(assert_error(too_long, 400)["message"])
        first = client.post("/conversations", json={"title": "ok"}).json()["id"]
        for title in ("", "   ", "a\u202eb", "a\nb"):
            response = client.patch(f"/conversations/{first}", json={"title": title})
            assert "title" in str(assert_error(response, 400)["message"]), title
        assert say(client, "Anything there?", first)["done"]  # an abstention is kept too
        full = client.post("/chat/stream", json={"message": "more", "conversationId": first})
        assert "limit of 2 messages" in assert_error(full, 413)["message"]
        client.post("/conversations")
        refused = client.post("/conversations")
        assert "2 conversations" in assert_error(refused, 429)["message"]
        assert int(refused.headers["Retry-After"]) > 0
        assert len(client.get("/conversations").json()) == 2
        client.delete(f"/conversations/{first}")
        assert client.post("/conversations").status_code == 201


def test_retention_dates_every_record(tmp_path, monkeypatch):
    monkeypatch.setenv("BUNKO_CONVERSATION_RETENTION_DAYS", "30")
    with serve(tmp_path / "data") as rest:
        client = rest.new_user().client
        made = client.post("/conversations").json()
        expires = datetime.fromisoformat(made["expiresAt"])
        created = datetime.fromisoformat(made["createdAt"])
        assert expires - created == timedelta(days=30)
        say(client, "Anything there?", made["id"])
        kept = client.get(f"/conversations/{made['id']}").json()
        last = datetime.fromisoformat(kept["updatedAt"])
        assert datetime.fromisoformat(kept["expiresAt"]) - last == timedelta(days=30)
        assert last > created and last <= datetime.now(UTC)


def test_deleting_a_user_deletes_their_conversations(rest):
    user = rest.new_user()
    made = user.client.post("/conversations").json()["id"]
    say(user.client, "Anything there?", made)
    workspace = rest.services.identity.authenticate(user.token).workspace_id
    store = rest.services.conversations.store
    assert store.count(workspace, user.id) == 1
    assert rest.admin().client.delete(f"/users/{user.id}").status_code == 200
    assert store.count(workspace, user.id) == 0
    assert store.get(workspace, user.id, made) is None


@pytest.mark.slow  # starts a second server
def test_conversations_survive_a_restart(tmp_path):
    with serve(tmp_path / "data") as rest:
        user = rest.new_user()
        load_documents(user, LIGHTHOUSE)
        made = user.client.post("/conversations").json()["id"]
        answer = say(user.client, "Who trims the lamp?", made)
        assert answer["sources"], answer
        before = user.client.get(f"/conversations/{made}").json()
    with serve(tmp_path / "data") as rest:
        again = rest.login(user.username, user.password).client
        assert again.get(f"/conversations/{made}").json() == before
        assert [c["id"] for c in again.get("/conversations").json()] == [made]
        assert say(again, "And how often?", made)["done"]
        assert again.get(f"/conversations/{made}").json()["messageCount"] == 4
