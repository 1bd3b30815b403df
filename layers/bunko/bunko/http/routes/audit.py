"""GET /audit: the audit trail (docs/audit.md). A library's owners read their library's
(the one X-Bunko-Library names, or their own); admins every library's, or one (`library`);
anyone else gets 403. Paged as the listings are: `limit` + `offset`, and `X-Total-Count`."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from bunko.domain.audit import MAX_PAGE, AuditQuery
from bunko.http.deps import CurrentPrincipal, ServicesDep, with_accounts
from bunko.http.errors import error_responses
from bunko.operations.aurak import AuditEntry
from bunko.services.accounts import AuditTrail

router = APIRouter(prefix="/audit", tags=["audit"], responses=error_responses(401, 403))


def get_audit(services: ServicesDep) -> AuditTrail:
    return with_accounts(services.audit)


@router.get("", response_model=list[AuditEntry], responses=error_responses(400))
def read_trail(
    principal: CurrentPrincipal,
    audit: Annotated[AuditTrail, Depends(get_audit)],
    response: Response,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    user: Annotated[
        str | None,
        Query(max_length=200, description="A person's id: their actions and their keys'."),
    ] = None,
    action: Annotated[
        str | None, Query(max_length=300, description="One action, e.g. `sign_in`.")
    ] = None,
    since: Annotated[datetime | None, Query(description="From this time (ISO 8601).")] = None,
    until: Annotated[datetime | None, Query(description="Before this time (ISO 8601).")] = None,
    library: Annotated[
        str | None, Query(max_length=200, description="(Admins) one library's id; else all.")
    ] = None,
) -> list[AuditEntry]:
    """The trail, newest first; `X-Total-Count` says how many events match in all."""
    query = AuditQuery(
        library_id=library,
        user_id=user,
        action=action,
        since=since,
        until=until,
        limit=limit,
        offset=offset,
    )
    page = audit.read(principal, query)
    response.headers["X-Total-Count"] = str(page.total)
    return [AuditEntry.of(e) for e in page.events]
