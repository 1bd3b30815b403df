"""Issue 33 point 5: what one ordinary user can hold of the server. Over real sockets:

- chats in progress: REST /chat/stream, /v1 (streaming) and MCP `ask` share one count per
  user; with `BUNKO_CHAT_STREAMS_PER_USER` (4) chats open the next is refused at every door
  (429 with Retry-After; a tool error over MCP) while another user chats on; when one
  finishes, or its client leaves, a new one is accepted. Before, a user could open any
  number, each holding a worker thread and a model call.
- research seals: a token bucket per workspace, `BUNKO_RESEARCH_SEAL_BURST` (10) at once,
  then `BUNKO_RESEARCH_SEALS_PER_MINUTE` (1) (429, Retry-After); a seal that changes nothing
  is free; at most MAX_PROJECTS projects and MAX_CORPUS_REVISIONS
  (`BUNKO_RESEARCH_MAX_CORPUS_REVISIONS`) revisions of a corpus. Before, a loop over sample seeds sealed (re-embedded and copied)
  without end.

Huge `limit`s and long histories are refused at every door: test_request_limits.py."""

from __future__ import annotations

import asyncio
import uuid
from contextlib import closing

import httpx
import openai
import pytest

from bunko.config import Settings
from bunko.services.research import research as research_service
from tests.e2e.mcp_harness import http_client
from tests.security.gated_llm import gated_llm
from tests.security.people import QUESTION, Held, Person
from tests.security.servers import Ports, both_ports
from tests.waiting import wait_for


def rest_chat(person: Person) -> str:
    """A whole /chat/stream answer (its text)."""
    with (
        person.client() as http,
        http.stream("POST", "/chat/stream", json={"message": QUESTION}) as response,
    ):
        assert response.status_code == 200, response.read()
        return response.read().decode()


def v1_chat(person: Person) -> str:
    stream = person.openai().chat.completions.create(
        model=person.model, messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


async def _ask(person: Person) -> tuple[bool, str]:
    async with http_client(person.ports.mcp, person.token) as client:  # a user's token
        result = await client.call_tool("ask", {"question": QUESTION})
    return result.is_error, result.content[0].text


def mcp_ask(person: Person) -> tuple[bool, str]:
    return asyncio.run(_ask(person))


def test_the_default_figures_are_documented():
    settings = Settings()
    assert settings.chat_streams_per_user == 4
    assert (settings.research_seal_burst, settings.research_seals_per_minute) == (10, 1)
    assert (research_service.MAX_PROJECTS, research_service.MAX_CORPUS_REVISIONS) == (100, 100)
    assert settings.research_max_corpus_revisions == research_service.MAX_CORPUS_REVISIONS


@pytest.mark.slow  # holds chats open on every door
def test_chats_in_progress_are_bounded_per_user_across_every_door(ports):
    limit = ports.services.settings.chat_streams_per_user
    with gated_llm() as llm:
        alice, bob = Person(ports, llm), Person(ports, llm)
        held = Held()
        doors = [rest_chat, v1_chat, mcp_ask] + [rest_chat] * (limit - 3)
        for chat in doors:
            held.start(chat, alice)
        wait_for(lambda: llm.started == limit and alice.in_progress() == limit, timeout=30)

        with alice.client() as http:  # REST (and the web app)
            refused = http.post("/chat/stream", json={"message": QUESTION})
        assert refused.status_code == 429, refused.text
        assert f"at most {limit} in progress per user" in refused.json()["message"]
        assert int(refused.headers["retry-after"]) >= 1
        with pytest.raises(openai.RateLimitError) as v1_refused:  # /v1, with OpenAI's client
            v1_chat(alice)
        assert v1_refused.value.code == "rate_limit_exceeded"
        assert int(v1_refused.value.response.headers["retry-after"]) >= 1
        failed, message = mcp_ask(alice)  # MCP: a tool error an agent can act on
        assert failed and "too many chats at once" in message and "try again" in message
        assert llm.started == limit  # no refused chat reached the model

        held.start(rest_chat, bob)  # another user is not slowed
        wait_for(lambda: bob.in_progress() == 1, timeout=30)

        llm.release()  # one of alice's chats finishes: her next one is accepted
        wait_for(lambda: alice.in_progress() + bob.in_progress() == limit, timeout=30)
        if alice.in_progress() == limit:  # the released one was bob's
            llm.release()
            wait_for(lambda: alice.in_progress() == limit - 1, timeout=30)
        held.start(rest_chat, alice)
        wait_for(lambda: alice.in_progress() == limit, timeout=30)
        llm.release(limit + 2)
        results = held.join()
    assert len(results) == limit + 2
    failures = [r for r in results if isinstance(r, BaseException)]
    assert not failures, failures
    assert all("lamp" in str(r) for r in results), results
    assert alice.in_progress() == 0 and bob.in_progress() == 0


def test_a_client_that_leaves_gives_its_chat_back(ports):
    with gated_llm() as llm:
        alice = Person(ports, llm)
        limit = ports.services.settings.chat_streams_per_user
        with alice.client() as http:
            streams = [
                http.stream("POST", "/chat/stream", json={"message": QUESTION})
                for _ in range(limit)
            ]
            responses = [s.__enter__() for s in streams]
            assert all(r.status_code == 200 for r in responses)
            wait_for(lambda: llm.started == limit, timeout=30)
            assert http.post("/chat/stream", json={"message": QUESTION}).status_code == 429
            streams[0].__exit__(None, None, None)  # the client hangs up mid-answer
            wait_for(lambda: alice.in_progress() == limit - 1, timeout=30)
            with http.stream("POST", "/chat/stream", json={"message": QUESTION}) as again:
                assert again.status_code == 200
                llm.release(limit + 1)
                assert "lamp" in again.read().decode()
            for stream in streams[1:]:
                stream.__exit__(None, None, None)
        wait_for(lambda: alice.in_progress() == 0, timeout=30)


def research_workspace(ports: Ports) -> tuple[str, httpx.Client, dict]:
    """A fresh workspace with two documents, its research key's client, and a project holding
    both as evidence (so a seal of a one-item sample can vary by seed)."""
    workspace = str(uuid.uuid4())
    _, key = ports.services.apikeys.create(workspace_id=workspace, scopes=("agent:research",))
    http = httpx.Client(base_url=ports.rest, headers={"Authorization": f"Bearer {key}"}, timeout=60)
    project = http.post(
        "/research-api/projects/create", json={"workspace_id": workspace, "name": "Tides"}
    ).json()["project"]
    common = {"workspace_id": workspace, "project_id": project["id"]}
    for name, text in (("moon.txt", "The moon pulls the tides."), ("sun.txt", "The sun too.")):
        doc = ports.services.ingest.submit_text(
            workspace, path=name, content=text, mime="text/plain"
        )
        ports.services.library.wait_until_indexed(workspace, doc.id, timeout=60)
        added = http.post(
            "/research-api/evidence/add", json={**common, "revision": 1, "document_id": doc.id}
        )
        assert added.status_code == 200, added.text
    return workspace, http, common


def seal(http: httpx.Client, common: dict, seed: int) -> httpx.Response:
    body = {**common, "sample_size": 1, "sample_seed": seed}
    return http.post("/research-api/corpora/seal", json=body)


def test_research_seals_are_bounded_per_workspace(tmp_path):
    with both_ports(tmp_path / "data", research_seal_burst=2) as ports:
        workspace, http, common = research_workspace(ports)
        with closing(http):
            assert [seal(http, common, seed).status_code for seed in (0, 1)] == [200, 200]
            refused = seal(http, common, 2)  # a new seed: a new revision to embed and copy
            assert refused.status_code == 429, refused.text
            assert "research seal rate limit: 2 at once" in refused.json()["message"]
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            assert seal(http, common, 1).status_code == 200  # nothing changed: free
            _, other, other_common = research_workspace(ports)
            with closing(other):  # another workspace seals on
                assert seal(other, other_common, 0).status_code == 200

        async def over_mcp() -> tuple[bool, str]:
            _, key = ports.services.apikeys.create(
                workspace_id=workspace, scopes=("agent:research",)
            )
            async with http_client(ports.mcp, key) as client:
                body = {**common, "sample_size": 1, "sample_seed": 3}
                result = await client.call_tool("research_corpora_seal", body)
            return result.is_error, result.content[0].text

        failed, message = asyncio.run(over_mcp())
        assert failed and "research seal rate limit: 2 at once, then 1 a minute" in message


def test_research_projects_and_corpus_revisions_are_bounded(tmp_path):
    # 3 revisions of a corpus at most here, not 100 seals
    with both_ports(
        tmp_path / "data", research_seals_per_minute=0, research_max_corpus_revisions=3
    ) as ports:
        workspace, http, common = research_workspace(ports)
        with closing(http):
            create = {"workspace_id": workspace, "name": "More"}
            for _ in range(research_service.MAX_PROJECTS - 1):
                assert http.post("/research-api/projects/create", json=create).status_code == 200
            refused = http.post("/research-api/projects/create", json=create)
            assert refused.status_code == 429 and "retry-after" in refused.headers
            assert f"{research_service.MAX_PROJECTS} research projects" in refused.text
            assert [seal(http, common, seed).status_code for seed in range(3)] == [200] * 3
            full = seal(http, common, 3)
            assert full.status_code == 429 and "3 revisions" in full.json()["message"]
