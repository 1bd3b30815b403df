"""Answers people mark and the missing list (docs/answers.md).

POST /answers/{answer_id}/mark: its asker marks an answer (another person's or another
library's answer id: 404). GET /answers/marked and GET /answers/missing: the library's
owners read its marked answers and what it could not answer (anyone else: 403).
GET/PUT /answers/settings: whether the library collects the missing list.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict

from bunko.errors import ServiceUnavailableError
from bunko.http.deps import CurrentPrincipal, Reader, ServicesDep
from bunko.http.errors import error_responses
from bunko.operations.answers import Comment, MarkedAnswer, MarkValue, MissingQuestion
from bunko.services.chat import (
    MAX_MARKED_PAGE,
    MAX_MISSING_GROUPS,
    AnswerBook,
    MissingList,
    require_owner,
)

router = APIRouter(prefix="/answers", tags=["answers"], responses=error_responses(401, 403))


class MarkBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mark: MarkValue
    comment: str | None = Comment


class AnswerSettingsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    collectMissing: bool


def _book(services) -> AnswerBook:
    if services.answers is None:
        raise ServiceUnavailableError("answers are not kept on this deployment")
    return services.answers


def _missing(services) -> MissingList:
    if services.missing is None:
        raise ServiceUnavailableError("answers are not kept on this deployment")
    return services.missing


@router.post("/{answer_id}/mark", responses=error_responses(400, 404))
def mark_answer(
    answer_id: str, body: MarkBody, principal: Reader, services: ServicesDep
) -> MarkedAnswer:
    """Thumbs up or down on one of your answers (the `answerId` its door returned), with an
    optional comment; marking again replaces your mark."""
    record = _book(services).mark(principal, answer_id, mark=body.mark, comment=body.comment)
    return MarkedAnswer.of(record)


@router.get("/marked", responses=error_responses(400))
def marked_answers(
    principal: CurrentPrincipal,
    services: ServicesDep,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=MAX_MARKED_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
) -> list[MarkedAnswer]:
    """The library's marked answers, last marked first (owners); `X-Total-Count`."""
    records, total = _book(services).marked(principal, limit=limit, offset=offset)
    response.headers["X-Total-Count"] = str(total)
    return [MarkedAnswer.of(r) for r in records]


@router.get("/missing", responses=error_responses(400))
async def missing_questions(
    principal: CurrentPrincipal,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=MAX_MISSING_GROUPS)] = 20,
) -> list[MissingQuestion]:
    """What the library could not answer: refused and marked-down questions grouped by
    similarity, the most asked first, with the passages Bunko had nearest each (owners)."""
    missing = _missing(services)
    groups = await anyio.to_thread.run_sync(lambda: missing.groups(principal, limit=limit))
    return [MissingQuestion.of(g) for g in groups]


@router.get("/settings")
def answer_settings(principal: CurrentPrincipal, services: ServicesDep) -> AnswerSettingsBody:
    """Whether the library collects the missing list (owners)."""
    require_owner(principal)
    kept = _book(services).answer_settings(principal.workspace_id)
    return AnswerSettingsBody(collectMissing=kept.collect_missing)


@router.put("/settings", responses=error_responses(400))
def change_answer_settings(
    body: AnswerSettingsBody, principal: CurrentPrincipal, services: ServicesDep
) -> AnswerSettingsBody:
    """Turn the missing list's collection on or off (owners); what it holds stays until its
    retention ends."""
    kept = _book(services).change_settings(principal, collect_missing=body.collectMissing)
    return AnswerSettingsBody(collectMissing=kept.collect_missing)
