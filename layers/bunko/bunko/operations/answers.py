"""The wire shapes of answers people mark and of the missing list (docs/answers.md), one
definition for REST and MCP."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from bunko.domain.answers import MAX_COMMENT_CHARS, AnswerRecord, MissingGroup
from bunko.operations.models import Output

MarkValue = Literal["up", "down"]
Comment = Field(
    default=None,
    max_length=MAX_COMMENT_CHARS,
    description=f"Why (optional, at most {MAX_COMMENT_CHARS} characters).",
)


class MarkedAnswer(Output):
    """An answer with its mark: the question, the answer, the sources it cited and, when it
    was asked in a stored conversation, that conversation and the answer's message index."""

    answerId: str
    question: str
    answer: str
    sources: list[dict[str, Any]] = Field(
        description="The sources it cited: fileName, documentId, chunkIndex, page, score, "
        "quote and the start of the passage (content)."
    )
    refused: bool = Field(description="Nothing was found: the answer said so.")
    door: str = Field(description="rest, v1 or mcp: where it was asked.")
    conversationId: str | None
    turn: int | None
    askedAt: datetime
    mark: MarkValue | None
    comment: str | None
    markedBy: str | None
    markedAt: datetime | None

    @classmethod
    def of(cls, record: AnswerRecord) -> MarkedAnswer:
        return cls(
            answerId=record.id,
            question=record.question,
            answer=record.answer,
            sources=record.sources,
            refused=record.refused,
            door=record.door,
            conversationId=record.conversation_id,
            turn=record.turn,
            askedAt=record.at,
            mark=record.mark,
            comment=record.comment,
            markedBy=record.marked_by,
            markedAt=record.marked_at,
        )


class MissingQuestion(Output):
    """Questions alike that the library refused or answered badly."""

    question: str = Field(description="The group's most recent question.")
    questions: list[str] = Field(description="Every distinct question in it, newest first.")
    count: int
    refused: int
    markedDown: int
    weeks: dict[str, int] = Field(description='How many per ISO week ("2026-W49").')
    lastAskedAt: datetime
    answerIds: list[str]
    nearest: list[dict[str, Any]] = Field(
        description="The passages Bunko had nearest the question, whatever their score."
    )

    @classmethod
    def of(cls, group: MissingGroup) -> MissingQuestion:
        return cls(
            question=group.question,
            questions=group.questions,
            count=group.count,
            refused=group.refused,
            markedDown=group.marked_down,
            weeks=group.weeks,
            lastAskedAt=group.last_at,
            answerIds=group.answer_ids,
            nearest=group.nearest,
        )
