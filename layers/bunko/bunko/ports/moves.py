"""Where a library's move started at a door lives (services/moving/jobs.py): its record, its
archive and the worker that runs it. On the embedded shape a SQLite file, a folder and a
thread of the server; on AWS the table (with a TTL), the bucket and the ingest function fed
from the queue, so any execution environment reads what another started."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bunko.ports.uploads import SignedUpload

# A job's record as its store keeps it: a JSON-ready mapping (MoveJob.record / from_record)
MoveRecord = dict[str, Any]
# Seconds the worker has left (a Lambda invocation's remaining time)
TimeLeft = Callable[[], float]


class MoveJobStore(Protocol):
    def save(self, record: MoveRecord) -> None:
        """Write the job's record whole (its `id` is the key), kept until `expires_at`
        (seconds since the epoch) when that is set."""
        ...

    def get(self, job_id: str) -> MoveRecord | None:
        """The record, None if unknown or past its `expires_at`."""
        ...

    def running(self) -> int:
        """How many jobs are running now."""
        ...

    def expired(self, now: float) -> list[MoveRecord]:
        """Records past their `expires_at` still kept (their archives to delete); a store
        whose own TTL removes them answers []."""
        ...

    def forget(self, job_id: str) -> None: ...


class ArchiveSpace(Protocol):
    """Where archives wait: an export's for its download, an import's upload for its reading."""

    # True: a download is served from this process (`local`); False: by a signed link
    served_here: bool

    def scratch(self, name: str) -> Path:
        """A file in a folder of its own on this machine, to write or read an archive."""
        ...

    def keep(self, key: str, path: Path) -> None:
        """`path` kept as `key` (then the scratch copy is no longer needed)."""
        ...

    def fetch(self, key: str) -> Path:
        """The archive `key` as a file on this machine (NotFoundError if gone)."""
        ...

    def local(self, key: str) -> Path | None:
        """The archive's file, where this process serves downloads (`served_here`)."""
        ...

    def link(self, key: str, filename: str, seconds: int) -> str:
        """A signed download of the archive as `filename` (not `served_here`)."""
        ...

    def upload_link(self, key: str, size: int, seconds: int) -> SignedUpload:
        """A signed PUT of an archive of exactly `size` bytes as `key` (not `served_here`)."""
        ...

    def delete(self, key: str) -> None: ...

    def discard(self, path: Path) -> None:
        """A scratch file and its folder, gone."""
        ...


class MoveRunner(Protocol):
    def start(self, job_id: str, *, delay: int = 0) -> None:
        """Run the job (LibraryMoves.run) away from the request that started it, `delay`
        seconds from now at the earliest."""
        ...


@dataclass
class MovePorts:
    """The three, as a shape provides them (None: the embedded defaults)."""

    jobs: MoveJobStore
    archives: ArchiveSpace
    runner: MoveRunner | None = None  # None: a thread of this process
