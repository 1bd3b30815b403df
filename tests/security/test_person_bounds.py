"""Issue 46, finding 6: per-user bounds were per library. The storage quota, the upload
bucket and the conversation cap were per workspace, so one user stored 5.4× the quota
through five libraries; the chats-per-user limit was per library for API keys, so one
viewer's key took every slot and the owner's agent got 429. Replayed over real sockets:
a person's personal library and the libraries they made share one quota and one upload
bucket, their conversations are counted across every library, and each key has its own
chat count."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.e2e.rest_harness import assert_error, serve
from tests.security.gated_llm import gated_llm
from tests.security.people import DOCUMENT, QUESTION, Held, Person
from tests.waiting import wait_for

QUOTA = 3000


def upload(user, name: str, size: int, library: str | None = None) -> httpx.Response:
    text = ("quota words " * (size // 12 + 1))[:size].encode()
    headers = {"X-Bunko-Library": library} if library else {}
    return user.client.post("/upload", files={"file": (name, text, "text/plain")}, headers=headers)


def libraries(user, count: int) -> list[str]:
    made = [user.client.post("/libraries", json={"name": f"shelf {i}"}) for i in range(count)]
    assert all(m.status_code == 201 for m in made), [m.text for m in made]
    return [m.json()["id"] for m in made]


def test_the_storage_quota_is_one_per_person_across_their_libraries(tmp_path):
    with serve(tmp_path / "data", upload_quota_bytes=QUOTA) as rest:
        alice, bob = rest.new_user(), rest.new_user()
        shelves = libraries(alice, 3)
        assert upload(alice, "big.txt", 2000).status_code == 201
        for shelf in shelves:  # each library was a fresh quota: 5.4× through five
            assert "quota" in assert_error(upload(alice, "more.txt", 1500, shelf), 413)["message"]
        assert upload(alice, "small.txt", 900, shelves[0]).status_code == 201
        # A member's upload counts against the library's maker, as its bytes do.
        added = alice.client.put(
            f"/libraries/{shelves[1]}/members", json={"username": bob.username, "role": "editor"}
        )
        assert added.status_code == 200, added.text
        assert_error(upload(bob, "bobs.txt", 200, shelves[1]), 413)
        assert upload(bob, "bobs.txt", 2000).status_code == 201  # his own are his


def test_the_upload_pace_is_one_per_person_across_their_libraries(tmp_path):
    with serve(tmp_path / "data", upload_rate_per_minute=3, upload_burst=3) as rest:
        alice, bob = rest.new_user(), rest.new_user()
        shelves = libraries(alice, 2)
        for i in range(3):
            assert upload(alice, f"a{i}.txt", 100).status_code == 201
        for shelf in shelves:
            refused = upload(alice, "late.txt", 100, shelf)
            assert_error(refused, 429)
            assert int(refused.headers["retry-after"]) >= 1
        assert upload(bob, "b.txt", 100).status_code == 201  # others are not slowed


def test_conversations_are_counted_per_person_across_libraries(tmp_path):
    with serve(tmp_path / "data", conversation_max_per_user=3) as rest:
        alice = rest.new_user()
        shelves = libraries(alice, 2)
        assert alice.client.post("/conversations", json={"title": "a"}).status_code == 201
        for shelf in shelves:
            made = alice.client.post(
                "/conversations", json={"title": "b"}, headers={"X-Bunko-Library": shelf}
            )
            assert made.status_code == 201, made.text
        refused = alice.client.post(
            "/conversations", json={"title": "c"}, headers={"X-Bunko-Library": shelves[0]}
        )
        assert_error(refused, 429)
        assert_error(alice.client.post("/conversations", json={"title": "d"}), 429)


def test_one_key_cannot_take_every_chat_slot_of_its_library(ports):
    """A viewer's key holds every chat it may in the owner's library; the owner's agent (a
    key of the owner's, in the same library) still chats."""
    limit = ports.services.settings.chat_streams_per_user
    with gated_llm() as llm:
        owner, viewer = Person(ports, llm), Person(ports, llm)
        with owner.client() as http:
            shelf = http.post("/libraries", json={"name": "Lighthouse logs"}).json()["id"]
            added = http.put(
                f"/libraries/{shelf}/members",
                json={"username": viewer.username, "role": "viewer"},
            )
            assert added.status_code == 200, added.text
            http.headers["X-Bunko-Library"] = shelf
            config = http.post("/model-configs", json={
                "name": "gated", "provider": "local", "modelId": "gated", "type": "llm",
                "baseUrl": llm.url,
            })  # fmt: skip
            assert config.status_code == 201, config.text
            model = config.json()["id"]
            owner_key = http.post("/api-keys", json={"name": "agent", "scopes": ["kb:read"]})
        with viewer.client() as http:
            http.headers["X-Bunko-Library"] = shelf
            viewer_key = http.post("/api-keys", json={"name": "mine", "scopes": ["kb:read"]})
        assert owner_key.status_code == viewer_key.status_code == 201, viewer_key.text
        doc = ports.services.ingest.submit_text(
            shelf, path="lighthouse.txt", content=DOCUMENT, mime="text/plain"
        )
        ports.services.library.wait_until_indexed(shelf, doc.id, timeout=60)

        def chat_with(key: str):
            def run(_person: Person) -> str:
                door = openai.OpenAI(
                    base_url=ports.rest + "/v1", api_key=key, max_retries=0, timeout=90
                )
                answer = door.chat.completions.create(
                    model=model, messages=[{"role": "user", "content": QUESTION}]
                )
                return answer.choices[0].message.content or ""

            return run

        held = Held()
        for _ in range(limit):
            held.start(chat_with(viewer_key.json()["key"]), viewer)
        wait_for(lambda: llm.started == limit, timeout=30)
        with pytest.raises(openai.RateLimitError):  # that key is at its bound...
            chat_with(viewer_key.json()["key"])(viewer)
        held.start(chat_with(owner_key.json()["key"]), owner)  # ...the owner's agent chats on
        wait_for(lambda: llm.started == limit + 1, timeout=30)
        llm.release(limit + 1)
        results = held.join()
    assert all("lamp" in str(r) for r in results), results
