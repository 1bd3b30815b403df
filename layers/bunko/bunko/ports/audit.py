"""Where the audit trail is kept: append-only. Nothing rewrites or deletes an event; the only
removal is retention's (`expire`, or the table's TTL on AWS)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from bunko.domain.audit import AuditEvent, AuditPage, AuditQuery


class AuditStore(Protocol):
    def append(self, event: AuditEvent) -> None:
        """Keep one event (until its retention ends)."""

    def events(self, query: AuditQuery) -> AuditPage:
        """The events `query` selects, newest first, with how many match in all; never an
        event whose retention has ended, whether or not it is gone yet."""

    def expire(self, now: datetime) -> int:
        """Remove the events whose retention ended before `now`; how many went (0 where the
        store removes them itself: DynamoDB's TTL)."""
