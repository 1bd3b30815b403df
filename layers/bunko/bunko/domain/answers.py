"""Answers people mark, and the questions a library could not answer (docs/answers.md).

Every answer Bunko gives at any door (REST, SSE, /v1, MCP `ask`) is kept as an
`AnswerRecord` under an answer id the door returns: the question, the answer, the sources it
cited and, when it was asked in a stored conversation, that conversation and turn. Only the
person who asked may read or mark it; a library's owners read the answers people marked, and
the questions it refused or answered badly ("the missing list"), never unmarked answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from bunko.domain.documents import new_id, utcnow

Mark = Literal["up", "down"]
MARKS: tuple[Mark, ...] = ("up", "down")


@dataclass(frozen=True)
class AnswerMark:
    """A person's mark on an answer: up or down, with what they said, by whom and when."""

    mark: Mark
    comment: str | None
    marked_by: str  # the user id (or key) that marked it
    marked_at: datetime


MAX_COMMENT_CHARS = 1000
# How long an answer nobody marked stays markable: its asker's window to mark it. A mark, or
# a refusal the library collects, keeps it for the audit trail's retention instead.
MARKABLE_DAYS = 30
MAX_KEPT_ANSWER_CHARS = 8000  # the answer's text as kept for its marks
MAX_KEPT_SOURCES = 20
# the missing list's reach: the newest this many collected questions are grouped
MAX_COLLECTED = 2000
# Two questions whose embeddings' cosine is at least this are one group (greedy, newest
# first). Measured on the default model (USE, docs/answers.md): paraphrases of one question
# 0.64-0.96, questions on other subjects 0.18-0.55, but one wording about two subjects can
# pass 0.6 (tests/bench/bench_answers.py: 13 of 24 groups mixed subjects at 0.6, 5 of 42 at
# 0.7). Another model's cosines sit elsewhere (e5 scores unrelated text ~0.74): unmeasured.
SAME_QUESTION = 0.7


@dataclass
class AnswerRecord:
    library_id: str
    asker: str  # conversation_owner(principal): a user id, "key:<id>" or "workspace:<id>"
    question: str
    answer: str
    sources: list[dict[str, Any]] = field(default_factory=list)  # cited, as the door sent them
    refused: bool = False  # nothing was found: the answer says so and no model was called
    door: str = "rest"  # rest, v1 or mcp
    conversation_id: str | None = None
    turn: int | None = None  # the answer's message index in the conversation (0-based)
    at: datetime = field(default_factory=utcnow)
    expires_at: datetime | None = None
    collected: bool = False  # on the library's missing list
    mark: Mark | None = None
    comment: str | None = None
    marked_by: str | None = None  # the user id (or key) that marked it
    marked_at: datetime | None = None
    id: str = field(default_factory=new_id)


@dataclass(frozen=True)
class MissingGroup:
    """Questions alike, on the missing list: how often they were refused or marked down."""

    question: str  # the group's newest question
    questions: list[str]  # every distinct question in it, newest first
    count: int
    refused: int
    marked_down: int
    weeks: dict[str, int]  # ISO week ("2026-W49") → how many that week
    last_at: datetime
    answer_ids: list[str]
    nearest: list[dict[str, Any]] = field(default_factory=list)  # the passages Bunko had


def iso_week(when: datetime) -> str:
    year, week, _ = when.isocalendar()
    return f"{year}-W{week:02d}"


def kept_until(when: datetime, days: int) -> datetime | None:
    """`days` after `when`; None (kept for ever) for 0."""
    return when + timedelta(days=days) if days else None
