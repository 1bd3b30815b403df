"""The audit trail (docs/audit.md): one event per request that changes something or is
refused, and each sign-in; read by a library's owners (their library) and admins (all).

A door opens a `RequestNote` for each request (`AuditTrail.open`); what learns the caller
during the request (http/deps) writes it there, and a service that records the request
itself (sign-in) marks it recorded, so the door records nothing more: one request, one event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bunko.domain import utcnow
from bunko.domain.audit import MAX_PAGE, AuditEvent, AuditPage, AuditQuery, Outcome
from bunko.domain.auth import SCOPE_ADMIN, SCOPE_WRITE, Principal
from bunko.errors import PermissionDeniedError, ValidationError
from bunko.ports.audit import AuditStore

log = logging.getLogger(__name__)

# Retention runs at most this often, beside a write (the embedded shape; AWS's TTL needs none).
EXPIRE_EVERY = timedelta(hours=1)


@dataclass
class RequestNote:
    """What the audit trail learns of one request while it runs."""

    client: str | None = None
    door: str = "rest"
    principal: Principal | None = None
    library_asked: str | None = None  # the library the request named, before it was entered
    reads_only: bool = False  # a route that writes nothing, whatever its method (POST /search)
    recorded: bool = False


_current: ContextVar[RequestNote | None] = ContextVar("bunko_audit_note", default=None)


def note_caller(principal: Principal, *, library_asked: str | None = None) -> None:
    """The request's caller, as the door learns it: before entering the library the request
    names (`library_asked`), then again once entered (the library's own id is kept)."""
    note = _current.get()
    if note is not None:
        note.principal, note.library_asked = principal, library_asked


def mark_reads_only() -> None:
    """The current request's route changes nothing (a search or an answer sent by POST)."""
    note = _current.get()
    if note is not None:
        note.reads_only = True


def who(principal: Principal | None) -> dict[str, str | None]:
    """The event's who: a person, or an API key and its maker."""
    if principal is None:
        return {}
    return {
        "user_id": principal.user_id,
        "api_key_id": principal.api_key_id,
        "key_maker": principal.key_maker,
    }


class AuditTrail:
    def __init__(self, store: AuditStore, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock
        self._expired_at: datetime | None = None

    @contextmanager
    def open(self, note: RequestNote) -> Iterator[RequestNote]:
        """Make `note` the current request's, for as long as the request runs."""
        token = _current.set(note)
        try:
            yield note
        finally:
            _current.reset(token)

    def record(self, event: AuditEvent) -> None:
        """Keep `event`, with the current request's address when it has none. A
        store that fails is logged, never the caller's failure: what it did is done."""
        note = _current.get()
        if note is not None:
            note.recorded = True
            if event.client is None:
                event = replace(event, client=note.client)
        try:
            self.store.append(event)
            self._expire_now_and_then(event.at)
        except Exception:
            log.exception("the audit trail could not keep %s", event.action)

    def record_request(
        self,
        note: RequestNote,
        *,
        action: str,
        status: int,
        outcome: Outcome,
        object_kind: str | None = None,
        object_id: str | None = None,
        library_id: str | None = None,
    ) -> None:
        """The door's event for a request that ran under `note`, in `library_id` when the
        request names the library it changes (`/libraries/{library_id}/members`), else in the
        library it worked in (or asked for, when refused entry)."""
        principal = note.principal
        library = library_id or note.library_asked
        library = library or (principal.workspace_id if principal else None)
        self.record(
            AuditEvent(
                action=action,
                outcome=outcome,
                status=status,
                library_id=library,
                object_kind=object_kind,
                object_id=object_id,
                client=note.client,
                door=note.door,
                **who(principal),
            )
        )

    def read(self, principal: Principal, query: AuditQuery) -> AuditPage:
        """Admins read every library's trail (or the one `query` names); a library's owners
        its own; anyone else is refused (403)."""
        if not 1 <= query.limit <= MAX_PAGE:
            raise ValidationError(f"limit: 1 to {MAX_PAGE}")
        if principal.has(SCOPE_ADMIN):
            return self.store.events(query)
        if not (principal.has(SCOPE_WRITE) and principal.manages()):
            raise PermissionDeniedError("only the library's owners may read its audit trail")
        return self.store.events(replace(query, library_id=principal.workspace_id))

    def _expire_now_and_then(self, now: datetime) -> None:
        if self._expired_at is None or now - self._expired_at >= EXPIRE_EVERY:
            self._expired_at = now
            removed = self.store.expire(now)
            if removed:
                log.info("the audit trail's retention removed %d events", removed)
