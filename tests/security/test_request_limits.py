"""Issue 33 point 1: one set of request limits at every door. Over real sockets, each door
gets the largest value a limit allows (accepted) and the first one over it (a 4xx, or an MCP
tool error, that names the limit): the chat question, the history's turns, one turn, the
history's total size, the search query and `limit`/`topK`. REST is also the web app's door
(it sends `message` with a `conversationId`, and searches with `q`).

Before these limits were shared, MCP `ask` refused a history of 51 turns that REST and /v1
took, the REST query stopped at 2,000 characters where MCP's went to 4,000, and no door
bounded the history's total size (100 turns of 32,000 characters were accepted)."""

from __future__ import annotations

import json
import uuid
from itertools import pairwise

import httpx
import openai
import pytest

from bunko.services.bounds.request_limits import (
    HISTORY_CHARS,
    HISTORY_TURNS,
    MESSAGE_CHARS,
    QUERY_CHARS,
    RESULTS,
    TURN_CHARS,
)
from tests.e2e.mcp_harness import http_client
from tests.security.servers import both_ports

QUESTION = "When was the lighthouse built?"


def text(n: int) -> str:
    """`n` characters of words (the keyword search reads them as a query)."""
    return ("lamp " * (n // 5 + 1))[:n]


def history(turns: int, chars: int) -> list[dict]:
    """`turns` alternating turns holding `chars` characters in all."""
    sizes = [chars // turns + (1 if i < chars % turns else 0) for i in range(turns)]
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text(size)}
        for i, size in enumerate(sizes)
    ]


# (name, history allowed, the first history refused, what the refusal names)
HISTORIES = [
    ("turns", history(HISTORY_TURNS, 2 * HISTORY_TURNS), history(HISTORY_TURNS + 1, 2 * 101),
     str(HISTORY_TURNS)),
    ("one turn", history(1, TURN_CHARS), history(1, TURN_CHARS + 1), str(TURN_CHARS)),
    ("total", history(HISTORY_TURNS, HISTORY_CHARS), history(HISTORY_TURNS, HISTORY_CHARS + 1),
     str(HISTORY_CHARS)),
]  # fmt: skip


@pytest.fixture(scope="module")
def door(tmp_path_factory):
    with both_ports(tmp_path_factory.mktemp("limits") / "data") as ports:
        rest = httpx.Client(base_url=ports.rest, timeout=60)
        name = f"limits-{uuid.uuid4().hex[:8]}"
        body = {"username": name, "password": "correct horse battery"}
        assert rest.post("/auth/register", json=body).status_code == 201
        token = rest.post("/auth/login", json=body).json()["access_token"]
        rest.headers["Authorization"] = f"Bearer {token}"
        workspace = ports.services.identity.authenticate(token).workspace_id
        _, key = ports.services.apikeys.create(workspace_id=workspace, scopes=("kb:read",))
        yield ports, rest, key
        rest.close()


def refusal(response: httpx.Response) -> str:
    """aurak's error body's message, as one string."""
    assert response.status_code == 400, response.text
    message = response.json()["message"]
    return "; ".join(message) if isinstance(message, list) else message


def chat(rest: httpx.Client, message: str, turns: list[dict] = ()) -> httpx.Response:
    """POST /chat/stream, read to the end."""
    body = {"message": message, "history": list(turns)}
    with rest.stream("POST", "/chat/stream", json=body) as response:
        response.read()
    return response


# REST (and the web app)


def test_rest_chat_message(door):
    _, rest, _ = door
    accepted = chat(rest, text(MESSAGE_CHARS))
    assert accepted.status_code == 200 and b"[DONE]" in accepted.content
    assert f"at most {MESSAGE_CHARS} characters" in refusal(chat(rest, text(MESSAGE_CHARS + 1)))


@pytest.mark.parametrize(("name", "allowed", "refused", "named"), HISTORIES)
def test_rest_chat_history(door, name, allowed, refused, named):
    _, rest, _ = door
    accepted = chat(rest, QUESTION, allowed)
    assert accepted.status_code == 200 and b"[DONE]" in accepted.content, accepted.text
    assert named in refusal(chat(rest, QUESTION, refused))


def test_rest_search_query_and_limit(door):
    _, rest, _ = door
    assert rest.get("/search", params={"q": text(QUERY_CHARS)}).status_code == 200
    assert str(QUERY_CHARS) in refusal(rest.get("/search", params={"q": text(QUERY_CHARS + 1)}))
    assert rest.get("/search", params={"q": "lamp", "limit": RESULTS}).status_code == 200
    over = rest.get("/search", params={"q": "lamp", "limit": RESULTS + 1})
    assert str(RESULTS) in refusal(over)


def test_rest_top_k_and_saved_limit(door):
    _, rest, _ = door
    assert rest.put("/user-settings", json={"topK": RESULTS}).status_code == 200
    assert str(RESULTS) in refusal(rest.put("/user-settings", json={"topK": RESULTS + 1}))
    assert rest.post("/settings", json={"limit": RESULTS}).status_code == 200
    assert str(RESULTS) in refusal(rest.post("/settings", json={"limit": RESULTS + 1}))


# MCP


async def call(door, tool: str, arguments: dict) -> tuple[bool, str]:
    ports, _, key = door
    async with http_client(ports.mcp, key) as client:
        result = await client.call_tool(tool, arguments)
    return result.is_error, result.content[0].text


@pytest.mark.anyio
async def test_mcp_ask_question(door):
    failed, answer = await call(door, "ask", {"question": text(MESSAGE_CHARS)})
    assert not failed, answer
    failed, message = await call(door, "ask", {"question": text(MESSAGE_CHARS + 1)})
    assert failed and f"at most {MESSAGE_CHARS} characters" in message


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "allowed", "refused", "named"), HISTORIES)
async def test_mcp_ask_history(door, name, allowed, refused, named):
    failed, answer = await call(door, "ask", {"question": QUESTION, "history": allowed})
    assert not failed, answer
    failed, message = await call(door, "ask", {"question": QUESTION, "history": refused})
    assert failed and named in message, message


@pytest.mark.anyio
async def test_mcp_search_text_query_and_limit(door):
    failed, found = await call(door, "search_text", {"content": text(QUERY_CHARS)})
    assert not failed, found
    failed, message = await call(door, "search_text", {"content": text(QUERY_CHARS + 1)})
    assert failed and str(QUERY_CHARS) in message
    failed, found = await call(door, "search_text", {"content": "lamp", "limit": RESULTS})
    assert not failed, found
    failed, message = await call(door, "search_text", {"content": "lamp", "limit": RESULTS + 1})
    assert failed and json.loads(message)["items"] == [] and str(RESULTS) in message


# /v1 (OpenAI's client)


def v1(door) -> openai.OpenAI:
    ports, rest, _ = door
    token = rest.headers["Authorization"].removeprefix("Bearer ")
    return openai.OpenAI(base_url=ports.rest + "/v1", api_key=token, max_retries=0)


def complete(door, messages: list[dict]):
    return v1(door).chat.completions.create(model="bunko-extractive", messages=messages)


def parts(message: str, pieces: int = 4) -> list[dict]:
    cuts = [len(message) * i // pieces for i in range(pieces + 1)]
    return [{"type": "text", "text": message[a:b]} for a, b in pairwise(cuts)]


@pytest.mark.parametrize("form", ["string", "parts"])
def test_v1_question(door, form):
    def ask(n: int) -> list[dict]:
        content = text(n) if form == "string" else parts(text(n))
        return [{"role": "user", "content": content}]

    assert complete(door, ask(MESSAGE_CHARS)).choices[0].message.content
    with pytest.raises(openai.BadRequestError, match=f"at most {MESSAGE_CHARS} characters"):
        complete(door, ask(MESSAGE_CHARS + 1))


@pytest.mark.parametrize(("name", "allowed", "refused", "named"), HISTORIES)
def test_v1_history(door, name, allowed, refused, named):
    question = [{"role": "user", "content": QUESTION}]
    assert complete(door, [*allowed, *question]).choices[0].message.content
    with pytest.raises(openai.BadRequestError, match=named):
        complete(door, [*refused, *question])
    if name == "total":  # sent as content parts, the same total holds
        split = [{**m, "content": parts(m["content"], 2)} for m in refused]
        with pytest.raises(openai.BadRequestError, match=named):
            complete(door, [*split, *question])
