"""UploadQuota: how much one person may upload — a rate and a storage quota per bill: a
person's personal library and every library they made count together (`bill`, from
services/accounts/bills.py; without one, each workspace alone). An agent's API key counts
against its library's bill.

- Rate: a token bucket (services/bounds/token_bucket.py): `burst` uploads at once (a folder of
  hundreds of files, an agent writing hundreds of notes), refilled at `per_minute`, kept
  atomically in the shared counter store so every worker and Lambda instance shares it.
  Past it: TooManyRequestsError (429) whose Retry-After is the exact wait for the next
  token; clients wait that long and send the file again, so pace never loses a file.
- Storage: the workspace's documents (their current revisions) plus the new file may not
  pass `max_bytes`: PayloadTooLargeError (413). Two uploads racing at the edge can each pass
  (one file of overshoot); the rate bounds how far that goes.

Files the operator adds (drop folder, S3 drops, the CLI) are not counted; a connector's
count against storage, not the rate; a presigned upload
is (admitted when signed, its storage checked again on arrival). 0 turns a limit off.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bunko.domain import utcnow
from bunko.domain.sources import CLI, DROP_FOLDER, PRESIGNED, S3_DROP, is_connector
from bunko.errors import PayloadTooLargeError
from bunko.ports import LoginAttemptStore, MetadataStore
from bunko.services.bounds import Bill, TokenBucket

OPERATOR_SOURCES = frozenset({DROP_FOLDER, S3_DROP, CLI})
# A presigned upload arriving: its pace was taken when it was signed; storage is checked again
# (other uploads may have landed since).
PRESIGNED_SOURCE = PRESIGNED


class UploadQuota:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        counters: LoginAttemptStore | None,
        max_bytes: int,
        per_minute: int,
        burst: int,
        bill: Callable[[str], Bill] | None = None,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        self.metadata = metadata
        self.bill = bill
        self.max_bytes = max_bytes
        self.rate = (
            TokenBucket(counters, burst=burst, per_minute=per_minute, what="upload", now=now)
            if counters is not None
            else None
        )

    def admit(self, workspace_id: str, size: int, *, source: str, replaces: int = 0) -> None:
        """Raise unless `workspace_id` may store `size` more bytes now (`replaces`: the size
        of the file this one replaces, which no longer counts)."""
        if source in OPERATOR_SOURCES:
            return
        bill = self.bill(workspace_id) if self.bill else Bill(workspace_id, (workspace_id,))
        if self.max_bytes:
            used = sum(self.used_bytes(w) for w in bill.workspaces) - replaces
            if used + size > self.max_bytes:
                raise PayloadTooLargeError(
                    f"storage quota reached: {used} of {self.max_bytes} bytes used; "
                    f"this file needs {size} more"
                )
        # A connector is paced by its own bounds (pages, files, bytes per sync), not by the
        # rate of a person's uploads; its files count against storage like theirs.
        if self.rate is not None and source != PRESIGNED_SOURCE and not is_connector(source):
            self.rate.take(bill.payer)

    def used_bytes(self, workspace_id: str) -> int:
        # The store's running total, not a read of every document (issue 47, point 7).
        return self.metadata.library_totals(workspace_id).bytes
