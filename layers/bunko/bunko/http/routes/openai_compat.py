"""An OpenAI-compatible door to chat: POST /v1/chat/completions (stream and non-stream, in
OpenAI's request and chunk shapes) and GET /v1/models, with the same API keys and tokens.

The model name is `bunko-extractive` (the offline answerer) or one of the caller's llm model
configs (its id or name). The client's last message is the question and the earlier user and
assistant messages its history (system messages are ignored: Bunko writes the grounded
prompt). Sources come back as numbered citations in the text, followed by a "Sources:" list,
and in the extra field `sources` (the response, or the stream's last chunk).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bunko.domain.metadata import parse_filter
from bunko.errors import NotFoundError, UpstreamError, ValidationError
from bunko.http.chat_events import chat_events, releasing
from bunko.http.deps import Reader, ReadsOnly, ServicesDep, settings_owner
from bunko.http.errors import error_responses
from bunko.operations.aurak import ChatSource
from bunko.ports.chat import EXTRACTIVE_MODEL, ChatMessage
from bunko.services.bounds import HISTORY_TURNS, MESSAGE_CHARS, TURN_CHARS, check_history
from bunko.services.chat import Source, slot_owner

router = APIRouter(tags=["openai-compatible"])


# A turn's text, however it is sent (a string or content parts), is held to the limits of
# every chat door (services/bounds/request_limits.py): the question to MESSAGE_CHARS, an earlier
# turn to TURN_CHARS, all earlier turns together to HISTORY_CHARS.
MAX_PARTS = 100


class TextPart(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Annotated[str, Field(max_length=50)]
    text: Annotated[str, Field(max_length=TURN_CHARS)] = ""


class Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: (
        Annotated[str, Field(max_length=TURN_CHARS)]
        | Annotated[list[TextPart], Field(max_length=MAX_PARTS)]
        | None
    ) = None

    @model_validator(mode="after")
    def _bounded(self) -> Message:
        if len(self.text()) > TURN_CHARS:
            raise ValueError(f"a message's text is at most {TURN_CHARS} characters")
        return self

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.text for p in self.content if p.type == "text")
        return self.content or ""


class CompletionRequest(BaseModel):
    """OpenAI's fields; the ones Bunko does not use (tools, n, stop, ...) are ignored."""

    model_config = ConfigDict(extra="ignore")
    model: Annotated[str, Field(min_length=1, max_length=200)]
    messages: Annotated[list[Message], Field(min_length=1)]
    stream: bool = False
    temperature: Annotated[float | None, Field(ge=0, le=2)] = None
    max_tokens: Annotated[int | None, Field(ge=1, le=32768)] = None
    max_completion_tokens: Annotated[int | None, Field(ge=1, le=32768)] = None
    # Bunko's extra field (the openai client's `extra_body`): answer only from files whose
    # metadata passes it (docs/rest.md "Metadata").
    filter: dict[str, Any] | None = None
    # and only from files this source owns (a source's name, connector:<id>, a door's own)
    source: Annotated[str | None, Field(min_length=1, max_length=200)] = None

    @field_validator("messages", mode="before")
    @classmethod
    def _few_enough(cls, messages: Any) -> Any:
        # before the messages are read one by one; the history is all but the question
        if isinstance(messages, list) and len(messages) > HISTORY_TURNS + 1:
            raise ValueError(
                f"at most {HISTORY_TURNS} earlier messages (HISTORY_TURNS) and the question"
            )
        return messages


def citations(sources: list[Source]) -> str:
    """The numbered list a plain OpenAI client shows under the answer."""
    if not sources:
        return ""
    lines = [f"[{n}] {s.file_name}{page_label(s)}" for n, s in enumerate(sources, 1)]
    return "\n\nSources:\n" + "\n".join(lines)


def page_label(source: Source) -> str:
    """ " p.4" (the quoted sentence's page), " p.3–5" (the passage's, with no quote), or the
    chunk's number for a file without pages."""
    if source.page is None:
        return f" (chunk {source.chunk_index})"
    if source.quote is None and source.page_end not in (None, source.page):
        return f" p.{source.page}–{source.page_end}"
    return f" p.{source.page}"


def _model_id(services, workspace_id: str, name: str) -> str | None:
    """The llm config a model name selects (None: the extractive answerer)."""
    if name == EXTRACTIVE_MODEL:
        return None
    accounts = services.accounts
    configs = accounts.model_configs.list(workspace_id) if accounts else []
    for config in configs:
        if config.type == "llm" and name in (config.id, config.name):
            return config.id
    raise NotFoundError(f"model {name!r} not found: GET /v1/models lists the models")


@router.get("/v1/models", responses=error_responses(401, 403))
def list_models(principal: Reader, services: ServicesDep) -> dict:
    accounts = services.accounts
    configs = accounts.model_configs.list(principal.workspace_id) if accounts else []
    models = [{"id": EXTRACTIVE_MODEL, "object": "model", "created": 0, "owned_by": "bunko"}]
    models += [
        {
            "id": c.id,
            "object": "model",
            "created": int(c.created_at.timestamp()),
            "owned_by": c.provider,
            "name": c.name,
        }
        for c in configs
        if c.type == "llm"
    ]
    return {"object": "list", "data": models}


@router.post(
    "/v1/chat/completions",
    dependencies=[ReadsOnly],
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "With stream: chunks as SSE"},
        **error_responses(400, 401, 403, 404, 413, 429, 502),
    },
)
async def chat_completions(
    body: CompletionRequest, principal: Reader, services: ServicesDep, request: Request
):
    question = body.messages[-1]
    if question.role != "user" or not question.text().strip():
        raise ValidationError("messages: the last message must be the user's question")
    if len(question.text()) > MESSAGE_CHARS:  # as /chat/stream's `message`
        raise ValidationError(f"messages: the question is at most {MESSAGE_CHARS} characters")
    check_history([m.text() for m in body.messages[:-1]])
    history = [
        ChatMessage(m.role, m.text()) for m in body.messages[:-1] if m.role in ("user", "assistant")
    ]
    workspace = principal.workspace_id
    chat = services.chat
    metadata_filter = parse_filter(body.filter)

    def preferences():
        source = services.search.named_source(workspace, body.source) if body.source else None
        prefs = chat.preferences(settings_owner(principal), workspace, None)
        return replace(
            prefs,
            llm_id=_model_id(services, workspace, body.model),
            temperature=prefs.temperature if body.temperature is None else body.temperature,
            max_tokens=body.max_completion_tokens or body.max_tokens or prefs.max_tokens,
            metadata_filter=metadata_filter,
            source_filter=source,
        )

    prefs = await anyio.to_thread.run_sync(preferences)
    answer = partial(chat.answer, workspace, question.text(), history, prefs)
    if services.answers is not None:
        answer = partial(
            services.answers.recorded,
            answer,
            principal=principal,
            question=question.text(),
            door="v1",
        )
    meta = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "created": int(time.time()),
        "model": body.model,
    }
    slot = services.chat_slots.take(slot_owner(principal))  # nothing below refuses
    if body.stream:
        return releasing(_chunks(answer, meta), slot, ping=request.app.state.keep_alive_seconds)
    text, sources, answer_id = "", [], None
    with slot:
        async for event in chat_events(answer):
            if event.type == "content":
                text += event.data
            elif event.type == "sources":
                sources, answer_id = event.data, event.answer_id
            elif event.type == "error":
                raise UpstreamError(event.data)
    return {
        **meta,
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text + citations(sources)},
                "finish_reason": "stop",
            }
        ],
        "sources": [ChatSource.of(s).body() for s in sources],
        **_answer_id(answer_id),
    }


def _answer_id(answer_id: str | None) -> dict[str, str]:
    """(Bunko) the id POST /answers/{answer_id}/mark takes, when the answer was kept."""
    return {"answer_id": answer_id} if answer_id else {}


def _chunk(meta: dict, delta: dict, finish: str | None = None, **extra: Any) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {**meta, "object": "chat.completion.chunk", "choices": [choice], **extra}
    return json.dumps(body, ensure_ascii=False)


async def _chunks(answer: partial, meta: dict) -> AsyncIterator[str]:
    yield _chunk(meta, {"role": "assistant", "content": ""})
    async for event in chat_events(answer):
        if event.type == "content":
            yield _chunk(meta, {"content": event.data})
        elif event.type == "sources":
            if event.data:
                yield _chunk(meta, {"content": citations(event.data)})
            sources = [ChatSource.of(s).body() for s in event.data]
            yield _chunk(meta, {}, "stop", sources=sources, **_answer_id(event.answer_id))
        elif event.type == "error":
            # OpenAI's SDKs raise on a chunk carrying `error`.
            yield json.dumps({"error": {"message": event.data, "type": "provider_error"}})
    yield "[DONE]"
