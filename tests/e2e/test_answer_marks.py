"""Answers people mark and what a library is missing (issue 50, points 2 and 3), over a
real server: every door returns an answer id (POST /chat/stream, a stored conversation's
turn, /v1/chat/completions with the official openai client, MCP `ask` with the official MCP
client); its asker marks it (REST, MCP `rate_answer`), nobody else can (404); the library's
owners read the marked answers and the missing list (refused and marked-down questions
grouped by similarity, per week, with the nearest passages), viewers and editors get 403; a
library setting turns the collection off."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from httpx_sse import connect_sse

from bunko.domain.answers import MAX_COMMENT_CHARS, iso_week
from bunko.domain.documents import utcnow
from tests.e2e.chat_harness import PROGRESS, load_documents
from tests.e2e.cli_harness import run
from tests.e2e.mcp_harness import http_client
from tests.e2e.rest_harness import assert_error

# the default model, which groups the missing list's questions (keyword-only search groups
# only the same words)
REST_SETTINGS = {"embedder": "use"}
DOCUMENTS = {
    "lighthouse.txt": "The Kessock lighthouse was built in 1872 on the northern shore. "
    "Its lamp is trimmed by the keeper every night.",
    "bakery.txt": "The village bakery opens at six in the morning. Its rye bread is baked in "
    "a wood-fired oven.",
}
ANSWERED = "When was the Kessock lighthouse built?"
# asked about what the library does not hold: refused, twice in other words
PARKING = ("Where can staff park their cars at the office?", "Where do employees park?")


def ask(client: httpx.Client, message: str, **extra) -> dict:
    """POST /chat/stream: the answer's text, its sources event and its answer id."""
    seen: dict = {"text": "", "sources": None, "answerId": None}
    body = {"message": message, **extra}
    with connect_sse(client, "POST", "/chat/stream", json=body) as source:
        assert source.response.status_code == 200, source.response.read()
        for sse in source.iter_sse():
            if sse.data == "[DONE]":
                break
            event = json.loads(sse.data)
            assert event["type"] != "error", event
            if event["type"] == "content" and event["data"] not in PROGRESS:
                seen["text"] += event["data"]
            elif event["type"] == "sources":
                seen["sources"], seen["answerId"] = event["data"], event.get("answerId")
    return seen


@pytest.fixture(scope="module")
def marked_team(rest):
    owner, editor, viewer, outsider = (rest.new_user() for _ in range(4))
    library = owner.client.post("/libraries", json={"name": "Marked Handbook"}).json()
    for user, role in ((viewer, "viewer"), (editor, "editor")):
        added = owner.client.put(f"/libraries/{library['id']}/members",
                                 json={"username": user.username, "role": role})  # fmt: skip
        assert added.status_code == 200
    for user in (owner, editor, viewer):
        user.client.headers["X-Bunko-Library"] = library["id"]
    load_documents(owner, DOCUMENTS)
    return owner, editor, viewer, outsider


def mark(client: httpx.Client, answer_id: str, value: str, comment: str | None = None):
    body = {"mark": value} | ({"comment": comment} if comment is not None else {})
    return client.post(f"/answers/{answer_id}/mark", json=body)


def test_an_answer_has_an_id_only_its_asker_may_mark(marked_team):
    owner, editor, viewer, outsider = marked_team
    answered = ask(viewer.client, ANSWERED)
    assert "1872" in answered["text"] and answered["sources"] and answered["answerId"]
    marked = mark(viewer.client, answered["answerId"], "up", "  Exactly right. ")
    assert marked.status_code == 200, marked.text
    body = marked.json()
    assert (body["mark"], body["comment"], body["question"]) == ("up", "Exactly right.", ANSWERED)
    assert body["sources"][0]["fileName"] == "lighthouse.txt" and not body["refused"]
    assert "1872" in body["answer"] and body["markedBy"] == viewer.id
    # nobody else may mark it: another member, the owner, an outsider (another library)
    for other in (editor, owner, outsider):
        assert_error(mark(other.client, answered["answerId"], "down"), 404)
    assert_error(mark(viewer.client, "no-such-answer", "up"), 404)
    assert_error(mark(viewer.client, answered["answerId"], "sideways"), 400)
    long = "x" * (MAX_COMMENT_CHARS + 1)
    assert_error(mark(viewer.client, answered["answerId"], "down", long), 400)
    # the viewer's own library is another library: the same id is not found there
    del viewer.client.headers["X-Bunko-Library"]
    try:
        assert_error(mark(viewer.client, answered["answerId"], "up"), 404)
    finally:
        viewer.client.headers["X-Bunko-Library"] = owner.client.headers["X-Bunko-Library"]


def test_a_conversations_turn_and_the_openai_door_have_answer_ids(rest, marked_team):
    owner, _, viewer, _ = marked_team
    conversation = viewer.client.post("/conversations").json()
    said = ask(viewer.client, ANSWERED, conversationId=conversation["id"])
    assert said["answerId"]
    marked = mark(viewer.client, said["answerId"], "down", "too short").json()
    assert (marked["conversationId"], marked["turn"]) == (conversation["id"], 1)
    kept = viewer.client.get(f"/conversations/{conversation['id']}").json()["messages"]
    assert kept[marked["turn"]]["role"] == "assistant"

    library = owner.client.headers["X-Bunko-Library"]
    door = openai.OpenAI(base_url=rest.url + "/v1", api_key=viewer.token, max_retries=0,
                         default_headers={"X-Bunko-Library": library})  # fmt: skip
    whole = door.chat.completions.create(model="bunko-extractive",
                                         messages=[{"role": "user", "content": ANSWERED}])  # fmt: skip
    answer_id = whole.model_extra["answer_id"]
    assert mark(viewer.client, answer_id, "up").json()["door"] == "v1"
    chunks = list(door.chat.completions.create(
        model="bunko-extractive", stream=True, messages=[{"role": "user", "content": ANSWERED}]))  # fmt: skip
    last = chunks[-1].model_extra
    assert last["answer_id"] and last["sources"]
    assert mark(viewer.client, last["answer_id"], "up").status_code == 200


@pytest.mark.anyio
async def test_mcp_ask_returns_an_answer_id_rate_answer_marks_it(rest):
    asker, other = rest.new_user(), rest.new_user()
    mine = asker.client.post("/api-keys", json={"name": "agent", "scopes": ["kb:read"]}).json()
    theirs = other.client.post("/api-keys", json={"scopes": ["kb:read"]}).json()
    async with http_client(rest.url, mine["key"]) as client:
        asked = (await client.call_tool("ask", {"question": PARKING[0]})).structured_content
        assert asked["sources"] == [] and asked["answerId"]
        rated = await client.call_tool(
            "rate_answer", {"answer_id": asked["answerId"], "mark": "down", "comment": "none"}
        )
        assert (rated.structured_content["mark"], rated.structured_content["door"]) == (
            "down", "mcp")  # fmt: skip
    async with http_client(rest.url, theirs["key"]) as client:
        result = await client.call_tool("rate_answer", {"answer_id": asked["answerId"],
                                                        "mark": "up"})  # fmt: skip
        said = " ".join(getattr(c, "text", "") for c in result.content)
        assert result.is_error and "not found" in said, said
    # the asker's own key is the asker; a person's sign-in is not that key
    assert_error(mark(asker.client, asked["answerId"], "up"), 404)


def test_owners_read_marks_and_the_missing_list_and_nobody_else(marked_team):
    owner, editor, viewer, outsider = marked_team
    refused = [ask(viewer.client, q) for q in PARKING]
    assert all(r["sources"] == [] and r["answerId"] for r in refused)
    badly = ask(editor.client, "When does the village bakery open?")
    assert badly["sources"] and mark(editor.client, badly["answerId"], "down").status_code == 200

    marked = owner.client.get("/answers/marked")
    assert marked.status_code == 200
    assert int(marked.headers["X-Total-Count"]) == len(marked.json()) >= 2
    assert marked.json()[0]["answerId"] == badly["answerId"]  # last marked first
    assert {m["mark"] for m in marked.json()} == {"up", "down"}

    missing = owner.client.get("/answers/missing")
    assert missing.status_code == 200, missing.text
    groups = missing.json()
    parking = next(g for g in groups if PARKING[1] in g["questions"])
    assert set(parking["questions"]) == set(PARKING)  # alike: one group
    assert parking["refused"] == parking["count"] == 2 and parking["markedDown"] == 0
    assert parking["weeks"] == {iso_week(utcnow()): 2}
    assert parking["nearest"] and {"fileName", "content", "score"} <= set(parking["nearest"][0])
    bakery = next(g for g in groups if g["answerIds"] == [badly["answerId"]])
    assert bakery["markedDown"] == 1 and bakery["refused"] == 0
    assert all(g["question"] != ANSWERED or g["markedDown"] for g in groups)

    for reader in (viewer, editor):  # viewers and editors read none of it
        for path in ("/answers/marked", "/answers/missing", "/answers/settings"):
            assert_error(reader.client.get(path), 403)
        assert_error(reader.client.put("/answers/settings", json={"collectMissing": False}), 403)
    outsider.client.headers["X-Bunko-Library"] = owner.client.headers["X-Bunko-Library"]
    try:
        assert_error(outsider.client.get("/answers/missing"), 404)  # not in the library
    finally:
        del outsider.client.headers["X-Bunko-Library"]
    # in their own library an outsider sees its list: none of this library's questions
    assert outsider.client.get("/answers/missing").json() == []
    assert outsider.client.get("/answers/marked").json() == []


def test_a_library_setting_turns_the_collection_off(marked_team):
    owner, _, viewer, _ = marked_team
    assert owner.client.get("/answers/settings").json() == {"collectMissing": True}
    off = owner.client.put("/answers/settings", json={"collectMissing": False})
    assert off.json() == {"collectMissing": False}
    try:
        unheard = "Is there a gym for employees on the third floor?"
        refused = ask(viewer.client, unheard)
        assert refused["sources"] == [] and refused["answerId"]
        assert mark(viewer.client, refused["answerId"], "down").status_code == 200
        groups = owner.client.get("/answers/missing").json()
        assert all(unheard not in g["questions"] for g in groups)
        # the mark itself still reaches the owners: the person chose to send it
        assert owner.client.get("/answers/marked").json()[0]["question"] == unheard
    finally:
        owner.client.put("/answers/settings", json={"collectMissing": True})


def test_deleting_a_library_takes_its_answers(rest):
    owner = rest.new_user()
    library = owner.client.post("/libraries", json={"name": "Short-lived"}).json()["id"]
    owner.client.headers["X-Bunko-Library"] = library
    refused = ask(owner.client, PARKING[0])
    assert mark(owner.client, refused["answerId"], "down").status_code == 200
    store = rest.services.answers.store
    assert store.get(library, refused["answerId"]) is not None
    assert owner.client.delete(f"/libraries/{library}").status_code in (200, 204)
    assert store.get(library, refused["answerId"]) is None
    assert store.marked(library, limit=10) == ([], 0) and store.collected(library, limit=10) == []


@pytest.mark.slow  # real `bunko missing` processes that load the model
def test_bunko_missing_prints_the_list_on_the_machine(rest, marked_team):
    owner = marked_team[0]
    for question in PARKING:  # this module's other tests may have run, or not
        ask(marked_team[2].client, question)
    name = "Marked Handbook"
    use = {"BUNKO_EMBEDDER": "use"}  # the server's model, which groups the questions
    data_dir = rest.services.settings.data_dir
    printed = run(["missing", "--library", name, "--json"], data_dir, env=use)
    groups = [json.loads(line) for line in printed.stdout.splitlines()]
    parking = next(g for g in groups if PARKING[0] in g["questions"])
    assert set(PARKING) <= set(parking["questions"]) and parking["refused"] >= 2
    assert parking["nearest"] and f"{len(groups)} groups" in printed.stderr
    assert groups == [g for g in groups if g["count"] >= 1]
    by_rest = owner.client.get("/answers/missing").json()
    assert [g["question"] for g in by_rest] == [g["question"] for g in groups]
    text = run(["missing", "--library", name], data_dir, env=use)
    assert "nearest: " in text.stdout and PARKING[0] in text.stdout
