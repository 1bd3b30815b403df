"""The audit trail's record: who did what, in which library, to which object, when, from
where, and how it ended (docs/audit.md). Never a document's or a question's content, never a
secret or a token: only ids, the action's name and the answer's status."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bunko.domain.documents import new_id, utcnow

Outcome = Literal["ok", "refused", "failed"]
# The statuses a refusal answers with: no credentials, no right, or not in that library.
REFUSED_STATUSES = frozenset({401, 403, 404})
# Actions named by a service rather than by the door's route.
SIGN_IN = "sign_in"
MAX_PAGE = 1000


def outcome_of(status: int) -> Outcome:
    if status < 400:
        return "ok"
    return "refused" if status in REFUSED_STATUSES else "failed"


@dataclass(frozen=True)
class AuditEvent:
    """One security-relevant action. `action` is the route ("POST /knowledge-base/upload"),
    the MCP tool ("mcp:delete_document") or a service's name for it ("sign_in")."""

    action: str
    outcome: Outcome
    status: int
    # who: a person, or an API key and the person who made it (accounts.OPERATOR on the machine)
    user_id: str | None = None
    api_key_id: str | None = None
    key_maker: str | None = None
    library_id: str | None = None  # the library acted on (or asked for, when refused)
    object_kind: str | None = None  # e.g. "file", "conversation", "key"
    object_id: str | None = None
    client: str | None = None  # the caller's address as the server sees it
    door: str = "rest"  # rest, mcp or cli
    at: datetime = field(default_factory=utcnow)
    id: str = field(default_factory=new_id)


@dataclass(frozen=True)
class AuditQuery:
    """Which events to read, newest first: one library's (None: every library, for admins),
    filtered by person (a user id: their own actions and their keys'), action, time range."""

    library_id: str | None = None
    user_id: str | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True)
class AuditPage:
    events: list[AuditEvent]
    total: int  # how many match in all (the listing routes' X-Total-Count)
