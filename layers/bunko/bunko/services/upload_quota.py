"""UploadQuota: how much one user may upload — a rate and a storage quota per workspace
(every user's personal workspace; an agent's API key counts against its workspace).

- Rate: at most `per_minute` new uploads in each minute window, counted atomically in the
  shared counter store (the login-attempt store: one SQLite transaction, one conditional
  DynamoDB write), so every worker and Lambda instance sees the same count. Over it:
  TooManyRequestsError (429, Retry-After).
- Storage: the workspace's documents (their current revisions) plus the new file may not
  pass `max_bytes`: PayloadTooLargeError (413). Two uploads racing at the edge can each pass
  (one file of overshoot); the rate bounds how far that goes.

Files the operator adds (drop folder, S3 drops, the CLI) are not counted. 0 turns a limit off.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

from bunko.domain import utcnow
from bunko.domain.accounts import LoginAttempts
from bunko.errors import PayloadTooLargeError, TooManyRequestsError
from bunko.ports import LoginAttemptStore, MetadataStore

OPERATOR_SOURCES = frozenset({"drop", "s3", "cli"})
WINDOW = timedelta(minutes=1)


class UploadQuota:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        counters: LoginAttemptStore | None,
        max_bytes: int,
        per_minute: int,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        self.metadata = metadata
        self.counters = counters
        self.max_bytes = max_bytes
        self.per_minute = per_minute
        self._now = now

    def admit(self, workspace_id: str, size: int, *, source: str, replaces: int = 0) -> None:
        """Raise unless `workspace_id` may store `size` more bytes now (`replaces`: the size
        of the file this one replaces, which no longer counts)."""
        if source in OPERATOR_SOURCES:
            return
        if self.max_bytes:
            used = self.used_bytes(workspace_id) - replaces
            if used + size > self.max_bytes:
                raise PayloadTooLargeError(
                    f"storage quota reached: {used} of {self.max_bytes} bytes used; "
                    f"this file needs {size} more"
                )
        if self.per_minute and self.counters is not None:
            self._count(workspace_id)

    def used_bytes(self, workspace_id: str) -> int:
        return sum(doc.size for doc in self.metadata.iter_documents(workspace_id))

    def _count(self, workspace_id: str) -> None:
        now = self._now()

        def count(records: list[LoginAttempts]) -> list[LoginAttempts]:
            window = records[0]  # failures: uploads so far; last_failure: the window's start
            if window.last_failure is None or now - window.last_failure >= WINDOW:
                window.failures, window.last_failure = 0, now
            if window.failures >= self.per_minute:
                wait = math.ceil((window.last_failure + WINDOW - now).total_seconds())
                raise TooManyRequestsError(
                    f"upload rate limit: {self.per_minute} uploads a minute; "
                    f"try again in {wait} seconds",
                    retry_after=max(wait, 1),
                )
            window.failures += 1
            return records

        assert self.counters is not None
        self.counters.update_attempts([f"uploads {workspace_id}"], count)
