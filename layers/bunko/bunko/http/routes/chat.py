"""aurak's POST /chat/stream: an answer with sources as Server-Sent Events.

data: {"type":"content","data":"<progress or answer text>"} ... then
data: {"type":"sources","data":[{fileName, content, score, chunkIndex, documentId}]}, or
data: {"type":"error","data":"<what failed and what to fix>"}; always data: [DONE] last.
A comment line keeps the connection alive every 15 s while a slow model thinks.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Literal

import anyio
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse

from bunko.errors import ValidationError
from bunko.http.chat_events import chat_events
from bunko.http.deps import Reader, ServicesDep, settings_owner
from bunko.http.errors import error_responses
from bunko.ports.chat import ChatMessage
from bunko.services.chat import ChatEvent

router = APIRouter(prefix="/chat", tags=["chat"])

KEEP_ALIVE_SECONDS = 15
MAX_MESSAGE_CHARS = 8000
MAX_HISTORY = 100


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant"]
    content: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS * 4)]


class ChatBody(BaseModel):
    message: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)]
    history: Annotated[list[Turn], Field(max_length=MAX_HISTORY)] = []
    userLanguage: Literal["zh", "en", "ja"] | None = None  # default: the saved `language`


def sse_data(event: ChatEvent) -> str:
    kind = "content" if event.type == "progress" else event.type
    data = [s.to_dict() for s in event.data] if event.type == "sources" else event.data
    return json.dumps({"type": kind, "data": data}, ensure_ascii=False)


@router.post(
    "/stream",
    response_class=EventSourceResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "The answer, as SSE"},
        **error_responses(400, 401, 403, 413),  # 413: a body over the request limit
    },
)
async def chat_stream(body: ChatBody, principal: Reader, services: ServicesDep):
    """Answer `message` from the caller's knowledge base, with the saved user settings.
    Nothing is stored: send the conversation so far in `history`."""
    chat = services.chat
    if not body.message.strip():
        raise ValidationError("message: must not be blank")
    prefs = await anyio.to_thread.run_sync(
        chat.preferences, settings_owner(principal), principal.workspace_id, body.userLanguage
    )
    history = [ChatMessage(t.role, t.content) for t in body.history]
    answer = partial(chat.answer, principal.workspace_id, body.message, history, prefs)

    async def stream() -> AsyncIterator[str]:
        async for event in chat_events(answer):
            yield sse_data(event)
        yield "[DONE]"

    return EventSourceResponse(stream(), ping=KEEP_ALIVE_SECONDS)
