"""aurak's POST /chat/stream: an answer with sources as Server-Sent Events.

data: {"type":"content","data":"<progress or answer text>"} ... then
data: {"type":"sources","data":[{fileName, content, score, chunkIndex, documentId}]}, or
data: {"type":"error","data":"<what failed and what to fix>"}; always data: [DONE] last.
A comment line keeps the connection alive every 15 s while a slow model thinks.

With `conversationId` (routes/conversations.py) the stored conversation is the history (it
wins over `history`) and the question and its finished answer are saved into it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse

from bunko.domain.metadata import parse_filter
from bunko.errors import ValidationError
from bunko.http.chat_events import chat_events, releasing
from bunko.http.deps import Reader, ReadsOnly, ServicesDep, conversation_owner, settings_owner
from bunko.http.errors import error_responses
from bunko.http.routes.conversations import get_conversations
from bunko.operations.aurak import ChatSource
from bunko.ports.chat import ChatMessage
from bunko.services.bounds import HISTORY_TURNS, MESSAGE_CHARS, TURN_CHARS, check_history
from bunko.services.chat import ChatEvent, slot_owner

router = APIRouter(prefix="/chat", tags=["chat"])

KEEP_ALIVE_SECONDS = 15  # the default of create_app's keep_alive_seconds


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant"]
    content: Annotated[str, Field(max_length=TURN_CHARS)]


class ChatBody(BaseModel):
    message: Annotated[str, Field(min_length=1, max_length=MESSAGE_CHARS)]
    history: Annotated[list[Turn], Field(max_length=HISTORY_TURNS)] = []
    userLanguage: Literal["zh", "en", "ja"] | None = None  # default: the saved `language`
    conversationId: Annotated[
        str | None,
        Field(
            max_length=100,
            description="A conversation of the caller's (POST /conversations): its stored "
            "messages are the history, and this question and its answer are saved into it.",
        ),
    ] = None
    filter: dict[str, Any] | None = Field(
        default=None,
        description="(Bunko) Answer only from files whose metadata passes this filter "
        '(docs/rest.md "Metadata").',
    )
    source: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="(Bunko) Answer only from files this source owns: a source's name "
        "(GET /sources), connector:<id>, or a door's own (upload, agent, drop, …).",
    )


def sse_data(event: ChatEvent) -> str:
    kind = "content" if event.type == "progress" else event.type
    data = [ChatSource.of(s).body() for s in event.data] if event.type == "sources" else event.data
    body: dict[str, Any] = {"type": kind, "data": data}
    if event.answer_id is not None:  # (Bunko) the id POST /answers/{answerId}/mark takes
        body["answerId"] = event.answer_id
    return json.dumps(body, ensure_ascii=False)


@router.post(
    "/stream",
    dependencies=[ReadsOnly],  # an answer: its turn is the conversation's, not the trail's
    response_class=EventSourceResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "The answer, as SSE"},
        # 404: an unknown conversationId; 413: a body over the request limit, or a full
        # conversation; 429: too many chats of this user in progress
        **error_responses(400, 401, 403, 404, 413, 429),
    },
)
async def chat_stream(body: ChatBody, principal: Reader, services: ServicesDep, request: Request):
    """Answer `message` from the caller's knowledge base, with the saved user settings.
    Send the conversation so far in `history`, or name a stored conversation in
    `conversationId` to answer from its messages and save this turn into it."""
    chat, ws, owner = services.chat, principal.workspace_id, conversation_owner(principal)
    if not body.message.strip():
        raise ValidationError("message: must not be blank")
    check_history([t.content for t in body.history])
    metadata_filter = parse_filter(body.filter)
    prefs = await anyio.to_thread.run_sync(
        chat.preferences, settings_owner(principal), ws, body.userLanguage
    )
    source = None
    if body.source is not None:  # 400 for a name that is no source here, before the stream
        source = await anyio.to_thread.run_sync(services.search.named_source, ws, body.source)
    prefs = replace(prefs, metadata_filter=metadata_filter, source_filter=source)
    history = [ChatMessage(t.role, t.content) for t in body.history]
    if body.conversationId is not None:
        kept = get_conversations(services)
        # 404 and 413 (full) here, before the stream starts
        history = await anyio.to_thread.run_sync(kept.history, ws, owner, body.conversationId)
    answer = partial(chat.answer, ws, body.message, history, prefs)
    if body.conversationId is not None:
        answer = partial(
            kept.recorded,
            answer,
            workspace_id=ws,
            owner=owner,
            conversation_id=body.conversationId,
            question=body.message,
        )
    if services.answers is not None:
        answer = partial(
            services.answers.recorded,
            answer,
            principal=principal,
            question=body.message,
            door="rest",
            conversation_id=body.conversationId,
        )

    async def stream() -> AsyncIterator[str]:
        async for event in chat_events(answer):
            yield sse_data(event)
        yield "[DONE]"

    # Taken last: nothing after it refuses, and the stream gives it back when it ends.
    slot = services.chat_slots.take(slot_owner(principal))
    return releasing(stream(), slot, ping=request.app.state.keep_alive_seconds)
