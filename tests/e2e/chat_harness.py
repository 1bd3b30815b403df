"""Shared by the chat end-to-end tests: a knowledge base with known documents, and an SSE
client (httpx-sse) that reads /chat/stream event by event."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx
from httpx_sse import connect_sse

from bunko.services.chat.chat_text import FOUND, SEARCHING
from tests.e2e.rest_harness import User, wait_until_done

PROGRESS = frozenset([*SEARCHING.values(), *FOUND.values()])

DOCUMENTS = {
    "lighthouse.txt": (
        "The Kessock lighthouse was built in 1872 on the northern shore. "
        "Its lamp is trimmed by the keeper every night.\n\n"
        "In 2023 the lighthouse was converted into a small museum about coastal shipping."
    ),
    "bakery.txt": (
        "The village bakery opens at six in the morning. "
        "Its rye bread is baked in a wood-fired oven."
    ),
    "tea.txt": "緑茶は日本で最も一般的なお茶です。静岡県は緑茶の生産量が最も多い県です。",
    "panda.txt": "大熊猫主要生活在中国四川省的山区。大熊猫以竹子为主要食物。",
}


@dataclass
class Answer:
    progress: list[str] = field(default_factory=list)  # content events before the answer
    text: str = ""
    sources: list[dict] | None = None
    errors: list[str] = field(default_factory=list)
    done: bool = False
    events: list[dict] = field(default_factory=list)


def load_documents(user: User, documents: dict[str, str] = DOCUMENTS) -> None:
    for name, text in documents.items():
        response = user.client.post("/upload", files={"file": (name, text.encode(), "text/plain")})
        assert response.status_code == 201, response.text
        assert wait_until_done(user.client, response.json()["id"])["status"] == "completed"


def ask(client: httpx.Client, message: str, *, history=(), language: str | None = None) -> Answer:
    """POST /chat/stream and read every event; progress messages (content events, as aurak
    sends them) are kept apart from the answer text."""
    body: dict = {"message": message, "history": list(history)}
    if language:
        body["userLanguage"] = language
    answer = Answer()
    with connect_sse(client, "POST", "/chat/stream", json=body) as source:
        assert source.response.status_code == 200, source.response.read()
        assert source.response.headers["content-type"].startswith("text/event-stream")
        for sse in source.iter_sse():
            if sse.data == "[DONE]":
                answer.done = True
                break
            event = json.loads(sse.data)
            answer.events.append(event)
            if event["type"] == "content":
                if event["data"] in PROGRESS:
                    answer.progress.append(event["data"])
                else:
                    answer.text += event["data"]
            elif event["type"] == "sources":
                answer.sources = event["data"]
            elif event["type"] == "error":
                answer.errors.append(event["data"])
    return answer
