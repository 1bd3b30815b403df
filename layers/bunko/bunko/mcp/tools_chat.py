"""The chat tools: `ask` answers a question from the knowledge base, with numbered sources
and an answer id; `rate_answer` marks that answer up or down (docs/answers.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bunko.domain.auth import SCOPE_READ
from bunko.domain.metadata import parse_filter
from bunko.errors import ServiceUnavailableError, UpstreamError
from bunko.mcp.inputs import MetadataFilter, SourceFilter, StrictInput
from bunko.mcp.registry import ToolContext, ToolSpec, tool
from bunko.operations.answers import Comment, MarkedAnswer
from bunko.operations.aurak import ChatSource
from bunko.operations.models import Output
from bunko.ports.chat import ChatMessage
from bunko.services.bounds import HISTORY_TURNS, MESSAGE_CHARS, TURN_CHARS, check_history
from bunko.services.chat import ChatEvent, collect_answer, slot_owner
from bunko.services.settings import settings_owner


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    role: Literal["user", "assistant"]
    content: str = Field(max_length=TURN_CHARS)


class AskInput(StrictInput):
    question: str = Field(
        min_length=1, max_length=MESSAGE_CHARS, description="The question, in any language."
    )
    history: list[Turn] = Field(
        default_factory=list,
        max_length=HISTORY_TURNS,
        description="The conversation so far, oldest first (the server stores none); "
        "a follow-up question is searched in its context.",
    )
    language: Literal["ja", "en", "zh"] | None = Field(
        None,
        description="The language of the framing text; omitted: the question's language "
        "(the saved setting when the question does not tell).",
    )
    filter: dict[str, Any] | None = MetadataFilter
    source: str | None = SourceFilter


class AskSource(ChatSource):
    """A source as every other door gives it (operations/aurak.ChatSource), with its number."""

    number: int = Field(ge=1, description="The [n] the answer cites this source by.")


class AskOutput(Output):
    answer: str = Field(description="The answer, citing sources as [1], [2].")
    sources: list[AskSource] = Field(
        description="The numbered sources; empty when nothing relevant was found (the answer "
        "then says so and no model was called)."
    )
    answerId: str | None = Field(
        None, description="The answer's id, for rate_answer (absent where none is kept)."
    )


@tool(
    title="Ask the knowledge base",
    scope=SCOPE_READ,
    read_only=True,
    destructive=False,
    idempotent=False,
    open_world=True,
    core=True,
)
def ask(ctx: ToolContext, args: AskInput) -> AskOutput:
    """Answer a question from the knowledge base with the caller's chat settings (model,
    topK, similarity threshold, rerank): `answer` cites its `sources` by number. When nothing
    in the knowledge base is relevant enough, no model is called and the answer says so.
    For the raw passages instead of an answer, use search_text."""
    chat = ctx.services.chat
    prefs = chat.preferences(settings_owner(ctx.principal), ctx.workspace_id, args.language)
    if args.language:  # named by the caller: the answer is framed in it
        prefs = replace(prefs, answer_language=args.language)
    source = (
        ctx.services.search.named_source(ctx.workspace_id, args.source) if args.source else None
    )
    prefs = replace(prefs, metadata_filter=parse_filter(args.filter), source_filter=source)
    check_history([t.content for t in args.history])  # the same total as every chat door
    history = [ChatMessage(t.role, t.content) for t in args.history]
    answer = partial(chat.answer, ctx.workspace_id, args.question, history, prefs)
    book = ctx.services.answers
    if book is not None:
        answer = partial(
            book.recorded, answer, principal=ctx.principal, question=args.question, door="mcp"
        )
    kept: list[str] = []
    with ctx.services.chat_slots.take(slot_owner(ctx.principal)):  # as REST's and /v1's
        events = answer(cancelled=lambda: False)
        text, sources, error = collect_answer(_noting_id(events, kept))
    if error is not None:
        raise UpstreamError(error)
    return AskOutput(
        answer=text,
        sources=[
            AskSource(number=n, **ChatSource.of(s).model_dump())
            for n, s in enumerate(sources, start=1)
        ],
        **({"answerId": kept[0]} if kept else {}),  # unset: left out of the result
    )


def _noting_id(events: Iterator[ChatEvent], kept: list[str]) -> Iterator[ChatEvent]:
    for event in events:
        if event.answer_id:
            kept.append(event.answer_id)
        yield event


class RateInput(StrictInput):
    answer_id: str = Field(min_length=1, max_length=100, description="`ask`'s answerId.")
    mark: Literal["up", "down"] = Field(description="up: it helped; down: it did not.")
    comment: str | None = Comment


@tool(
    title="Mark an answer",
    scope=SCOPE_READ,
    read_only=False,
    destructive=False,
    idempotent=True,
    core=True,  # beside `ask`, whose answers it marks
)
def rate_answer(ctx: ToolContext, args: RateInput) -> MarkedAnswer:
    """Mark one of your answers (the answerId `ask` returned) up or down, with an optional
    comment, for the library's owners to read; marking again replaces your mark. Another
    person's answer is not found."""
    book = ctx.services.answers
    if book is None:
        raise ServiceUnavailableError("answers are not kept on this deployment")
    record = book.mark(ctx.principal, args.answer_id, mark=args.mark, comment=args.comment)
    return MarkedAnswer.of(record)


CHAT_TOOLS: tuple[ToolSpec, ...] = (ask, rate_answer)
