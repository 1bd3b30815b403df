"""The owners' read tools: the library's audit trail (docs/audit.md), its marked answers and
its missing list (docs/answers.md). Each calls the service REST's GET /audit,
GET /answers/marked and GET /answers/missing call, which refuses anyone but the library's
owners (and, for the trail, admins) as it refuses them over REST."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from bunko.domain.audit import MAX_PAGE, AuditQuery
from bunko.domain.auth import SCOPE_WRITE
from bunko.errors import ServiceUnavailableError
from bunko.mcp.registry import ToolContext, ToolSpec, tool
from bunko.operations.answers import MarkedAnswer, MissingQuestion
from bunko.operations.aurak import AuditEntry
from bunko.operations.models import Output, StrictInput
from bunko.services.chat import MAX_MARKED_PAGE, MAX_MISSING_GROUPS, AnswerBook, MissingList

_OFFSET = Field(0, ge=0, le=1_000_000_000, description="How many to skip (paging).")


class ActivityInput(StrictInput):
    user: str | None = Field(
        None, max_length=200, description="A person's id: their actions and their keys'."
    )
    action: str | None = Field(
        None, max_length=300, description="One action, e.g. `sign_in` or `mcp:delete_document`."
    )
    since: datetime | None = Field(None, description="From this time (ISO 8601).")
    until: datetime | None = Field(None, description="Before this time (ISO 8601).")
    library: str | None = Field(
        None, max_length=200, description="(Admins) one library's id; else every library's."
    )
    limit: int = Field(100, ge=1, le=MAX_PAGE, description="How many events at most.")
    offset: int = _OFFSET


class ActivityOutput(Output):
    events: list[AuditEntry] = Field(description="The events, newest first.")
    total: int = Field(description="How many events match in all (page with offset).")


class MarkedInput(StrictInput):
    limit: int = Field(50, ge=1, le=MAX_MARKED_PAGE, description="How many answers at most.")
    offset: int = _OFFSET


class MarkedOutput(Output):
    answers: list[MarkedAnswer] = Field(description="Marked answers, last marked first.")
    total: int = Field(description="How many marked answers in all (page with offset).")


class MissingInput(StrictInput):
    limit: int = Field(20, ge=1, le=MAX_MISSING_GROUPS, description="How many groups at most.")


class MissingOutput(Output):
    groups: list[MissingQuestion] = Field(description="The most asked first.")


def _book(ctx: ToolContext) -> AnswerBook:
    if ctx.services.answers is None:
        raise ServiceUnavailableError("answers are not kept on this deployment")
    return ctx.services.answers


def _missing(ctx: ToolContext) -> MissingList:
    if ctx.services.missing is None:
        raise ServiceUnavailableError("answers are not kept on this deployment")
    return ctx.services.missing


@tool(
    title="List the library's activity",
    scope=SCOPE_WRITE,
    read_only=True,
    destructive=False,
    idempotent=True,
)
def list_activity(ctx: ToolContext, args: ActivityInput) -> ActivityOutput:
    """The library's audit trail, newest first (its owners only; an admin's key reads every
    library's, or `library`'s): who did what (sign-ins, uploads, deletes, role changes, keys,
    settings, tool calls), to which object, when, from where, and the outcome, refusals
    included. Filter by `user`, `action`, `since`/`until`; page with `limit` and `offset`."""
    trail = ctx.services.audit
    if trail is None:
        raise ServiceUnavailableError("user accounts are not available on this backend yet")
    query = AuditQuery(
        library_id=args.library,
        user_id=args.user,
        action=args.action,
        since=args.since,
        until=args.until,
        limit=args.limit,
        offset=args.offset,
    )
    page = trail.read(ctx.principal, query)
    return ActivityOutput(events=[AuditEntry.of(e) for e in page.events], total=page.total)


@tool(
    title="List marked answers",
    scope=SCOPE_WRITE,
    read_only=True,
    destructive=False,
    idempotent=True,
)
def list_marked_answers(ctx: ToolContext, args: MarkedInput) -> MarkedOutput:
    """The answers people marked up or down in this library, last marked first (its owners
    only): the question, the answer, the sources it cited, the mark and its comment."""
    records, total = _book(ctx).marked(ctx.principal, limit=args.limit, offset=args.offset)
    return MarkedOutput(answers=[MarkedAnswer.of(r) for r in records], total=total)


@tool(
    title="List questions the library could not answer",
    scope=SCOPE_WRITE,
    read_only=True,
    destructive=False,
    idempotent=True,
)
def list_missing_questions(ctx: ToolContext, args: MissingInput) -> MissingOutput:
    """What the library is missing (its owners only): questions it refused ("nothing
    found") and answers marked down, grouped by similar question, the most asked first,
    each with its count per ISO week and the passages Bunko had nearest it, whatever their
    score. The documents to write next."""
    groups = _missing(ctx).groups(ctx.principal, limit=args.limit)
    return MissingOutput(groups=[MissingQuestion.of(g) for g in groups])


OWNER_TOOLS: tuple[ToolSpec, ...] = (list_activity, list_marked_answers, list_missing_questions)
