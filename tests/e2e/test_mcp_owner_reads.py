"""The owners' reads over MCP with the official client (issue 50, "over REST and MCP"):
`list_activity` (the audit trail), `list_marked_answers` and `list_missing_questions` answer a
library's owner what GET /audit, GET /answers/marked and GET /answers/missing answer, with the
same filters and paging; a viewer's and an editor's keys are refused as REST refuses them;
another library's events, answers and questions never appear; reading leaves no event."""

from __future__ import annotations

import pytest

from bunko.domain.audit import AuditQuery
from tests.e2e.chat_harness import load_documents
from tests.e2e.mcp_harness import http_client, ok, refusal, shared_library

pytestmark = pytest.mark.anyio

DOCUMENTS = {
    "lighthouse.txt": "The Kessock lighthouse was built in 1872 on the northern shore. "
    "Its lamp is trimmed by the keeper every night.",
}
ANSWERED = "When was the Kessock lighthouse built?"
REFUSED = "Where can staff park their cars?"
ELSEWHERE = "Which wines does the cellar keep?"  # asked in another library
OWNER_TOOLS = ("list_activity", "list_marked_answers", "list_missing_questions")


def _events(rest) -> int:
    return rest.services.audit.store.events(AuditQuery(limit=1)).total


async def _ask_and_mark(url: str, key: str, question: str, mark: str) -> str:
    async with http_client(url, key) as client:
        asked = ok(await client.call_tool("ask", {"question": question}))
        rated = {"answer_id": asked["answerId"], "mark": mark, "comment": f"{mark}: {question}"}
        ok(await client.call_tool("rate_answer", rated))
    return asked["answerId"]


async def test_owners_read_the_trail_marks_and_missing_list_over_mcp(rest):
    owner, library, keys = shared_library(rest)
    load_documents(owner, DOCUMENTS)
    down = await _ask_and_mark(rest.url, keys["viewer"], ANSWERED, "down")
    async with http_client(rest.url, keys["viewer"]) as viewer:
        refused = ok(await viewer.call_tool("ask", {"question": REFUSED}))
        assert refused["sources"] == []
    # another library, with its own marked answer, refusal and events
    outsider = rest.new_user()
    other = outsider.client.post("/api-keys", json={"scopes": ["kb:read", "kb:write"]}).json()
    theirs = await _ask_and_mark(rest.url, other["key"], ELSEWHERE, "down")
    elsewhere = rest.services.audit.store.events(AuditQuery(user_id=outsider.id)).events
    other_library = elsewhere[0].library_id
    assert other_library and other_library != library

    before = _events(rest)
    async with http_client(rest.url, keys["owner"]) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert set(OWNER_TOOLS) <= names
        trail = ok(await client.call_tool("list_activity", {}))
        assert trail["total"] == len(trail["events"]) > 0
        assert {e["libraryId"] for e in trail["events"]} == {library}
        rest_trail = owner.client.get("/audit")
        assert rest_trail.status_code == 200, rest_trail.text
        assert [e["id"] for e in trail["events"]] == [e["id"] for e in rest_trail.json()]
        # the same filters as REST: action, person, time range, paging
        marks = ok(await client.call_tool("list_activity", {"action": "mcp:rate_answer"}))
        assert [(e["action"], e["door"], e["objectId"]) for e in marks["events"]] == [
            ("mcp:rate_answer", "mcp", down)
        ]
        mine = ok(await client.call_tool("list_activity", {"user": owner.id}))
        assert mine["events"] and {e["userId"] or e["keyMaker"] for e in mine["events"]} == {
            owner.id
        }
        newest = trail["events"][0]["at"]
        later = ok(await client.call_tool("list_activity", {"since": newest}))
        earlier = ok(await client.call_tool("list_activity", {"until": newest}))
        assert later["total"] + earlier["total"] == trail["total"] and later["total"] >= 1
        page = ok(await client.call_tool("list_activity", {"limit": 1, "offset": 1}))
        assert page["total"] == trail["total"]
        assert [e["id"] for e in page["events"]] == [trail["events"][1]["id"]]
        # an owner naming another library still reads only their own (as REST)
        others = ok(await client.call_tool("list_activity", {"library": other_library}))
        assert {e["libraryId"] for e in others["events"]} == {library}

        marked = ok(await client.call_tool("list_marked_answers", {}))
        assert marked["total"] == 1
        assert [
            (a["answerId"], a["question"], a["mark"], a["door"]) for a in marked["answers"]
        ] == [(down, ANSWERED, "down", "mcp")]
        assert marked["answers"][0]["sources"][0]["fileName"] == "lighthouse.txt"
        assert marked == {"answers": owner.client.get("/answers/marked").json(), "total": 1}
        assert ok(await client.call_tool("list_marked_answers", {"offset": 1}))["answers"] == []

        missing = ok(await client.call_tool("list_missing_questions", {}))["groups"]
        asked = {q for g in missing for q in g["questions"]}
        assert asked == {ANSWERED, REFUSED}  # never the other library's question
        assert theirs not in {i for g in missing for i in g["answerIds"]}
        assert sum(g["refused"] for g in missing) == 1
        assert sum(g["markedDown"] for g in missing) == 1
        assert all(sum(g["weeks"].values()) == g["count"] for g in missing)
        near = next(g for g in missing if ANSWERED in g["questions"])["nearest"]
        assert near and near[0]["fileName"] == "lighthouse.txt"
        assert missing == owner.client.get("/answers/missing").json()
        one = ok(await client.call_tool("list_missing_questions", {"limit": 1}))["groups"]
        assert len(one) == 1
    # REST's reads above and the tools' leave no event
    assert _events(rest) == before

    async with http_client(rest.url, keys["editor"]) as editor:
        for name in OWNER_TOOLS:
            assert "only the library's owners" in await refusal(editor, name, {})
    async with http_client(rest.url, keys["viewer"]) as viewer:
        for name in OWNER_TOOLS:
            assert "kb:write scope" in await refusal(viewer, name, {})
    # each refusal is on record: the editor's by the tool, the viewer's (refused for its
    # key's scope before any tool runs) by the MCP endpoint
    latest = rest.services.audit.store.events(AuditQuery(limit=6)).events
    assert [(e.action, e.outcome) for e in latest[:3]] == [("POST /mcp", "refused")] * 3
    assert {(e.action, e.outcome, e.library_id) for e in latest[3:]} == {
        (f"mcp:{name}", "refused", library) for name in OWNER_TOOLS
    }


async def test_an_admins_key_reads_every_librarys_trail_as_rest_allows(rest):
    admin = rest.admin()
    key = admin.client.post("/api-keys", json={"scopes": ["kb:read", "kb:write", "admin"]}).json()
    owner = rest.new_user()
    made = owner.client.post("/libraries", json={"name": "Cellar"})
    assert made.status_code == 201, made.text
    library = made.json()["id"]
    there = {"X-Bunko-Library": library}
    made = owner.client.post("/api-keys", json={"scopes": ["kb:read"]}, headers=there)
    assert made.status_code == 201, made.text  # an event in that library
    async with http_client(rest.url, key["key"]) as client:
        every = ok(await client.call_tool("list_activity", {"limit": 1000}))
        assert library in {e["libraryId"] for e in every["events"]}
        assert every["total"] == len(admin.client.get("/audit", params={"limit": 1000}).json())
        one = ok(await client.call_tool("list_activity", {"library": library}))
        assert one["events"] and {e["libraryId"] for e in one["events"]} == {library}
