"""Moves started at the REST and MCP doors (docs/owners.md, "Moving a library"): an export
written into a spool file that a download then reads from disk, and an import read from an
uploaded archive spooled to disk; each runs in a thread of this process and its progress is
read by polling. `bunko export` / `bunko import` call export_library / import_library directly.

The doors record each request in the audit trail themselves (one event a request), so the
parts these jobs use carry no trail of their own.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from bunko.domain import new_id, utcnow
from bunko.errors import NotFoundError, TooManyRequestsError
from bunko.services.moving.archive import ArchiveReader
from bunko.services.moving.export import ExportReport, export_library
from bunko.services.moving.imports import ImportProgress, ImportReport, import_library
from bunko.services.moving.parts import MovingParts

EXPORT_TTL = 15 * 60  # seconds an export's archive waits for its download
MAX_RUNNING = 2  # moves at once in one process: each reads or writes a whole library
RETRY_AFTER = 30

Status = Literal["running", "done", "failed"]


@dataclass
class MoveJob:
    """One export or import; its fields are read by polling while a thread fills them."""

    id: str
    kind: Literal["export", "import"]
    workspace_id: str  # the library exported, or the one imported into
    started_by: str | None  # the person's user id
    status: Status = "running"
    phase: str = ""  # "exporting", "importing", "indexing"
    done: int = 0
    total: int = 0
    error: str | None = None
    started_at: Any = field(default_factory=utcnow)
    finished_at: Any = None
    expires_at: float | None = None  # monotonic; an export's archive is deleted then
    path: Path | None = None  # the archive (an export's, or the upload an import reads)
    link: str = field(default_factory=lambda: secrets.token_urlsafe(32))  # download secret
    exported: ExportReport | None = None
    imported: ImportReport | None = None

    def step(self, n: int) -> None:
        self.done += n

    def phase_of(self, label: str, total: int) -> None:
        self.phase, self.total, self.done = label, total, 0

    def end(self, failure: Exception | None, *, at: Any) -> None:
        """The job's last state: done, or failed with what stopped it (the next poll reads it)."""
        if failure is None:
            self.status = "done"
        else:
            self.status, self.error = "failed", str(failure) or type(failure).__name__
        self.finished_at = at


def archive_link(job: MoveJob) -> str:
    """Where the REST door serves a finished export's archive: a path with its download
    secret (http/routes/moving.py), which the MCP tool gives too."""
    return f"/libraries/{job.workspace_id}/export/{job.id}/archive?link={job.link}"


class LibraryMoves:
    """The jobs of this process. `parts` builds the moving parts of the running services."""

    def __init__(
        self,
        parts: Callable[[], MovingParts],
        *,
        spool: Path,
        ttl: float = EXPORT_TTL,
        max_running: int = MAX_RUNNING,
        clock: Callable[[], float] = time.monotonic,  # what the TTL is counted on
    ) -> None:
        self._parts = parts
        self.clock = clock
        self.spool = spool
        self.ttl = ttl
        self.max_running = max_running
        self._jobs: dict[str, MoveJob] = {}
        self._lock = threading.Lock()

    # -- export ----------------------------------------------------------------------------

    def start_export(
        self, workspace_id: str, *, by: str | None, conversations: bool, vectors: bool
    ) -> MoveJob:
        """Start writing the library's archive (the caller checked that `by` owns it)."""
        parts = replace(self._parts(), audit=None)
        total = parts.library.count_documents(workspace_id)  # before a slot is taken
        job = self._admit("export", workspace_id, by)
        job.path = self.spool / f"{job.id}.zip"
        job.phase_of("exporting", total)

        def run() -> None:
            job.exported = export_library(
                parts,
                workspace_id,
                job.path,
                conversations=conversations,
                vectors=vectors,
                progress=job.step,
            )

        self._run(job, run, keep=True)
        return job

    def export(self, workspace_id: str, job_id: str) -> MoveJob:
        """The library's export `job_id`; NotFoundError once expired or for another library."""
        self._sweep()
        job = self._jobs.get(job_id)
        if job is None or job.kind != "export" or job.workspace_id != workspace_id:
            raise NotFoundError(
                f"no export {job_id!r} (an archive is kept {self.ttl // 60:.0f} min)"
            )
        return job

    def archive(self, workspace_id: str, job_id: str) -> MoveJob:
        """The finished export whose archive is there to download."""
        job = self.export(workspace_id, job_id)
        if job.status != "done" or job.path is None or not job.path.is_file():
            raise NotFoundError(f"export {job_id!r} has no archive ({job.status})")
        return job

    def linked(self, workspace_id: str, job_id: str, link: str) -> MoveJob:
        """The finished export that `link` (its download secret) opens, without a token."""
        job = self.archive(workspace_id, job_id)
        if not secrets.compare_digest(job.link.encode(), link.encode()):
            raise NotFoundError(f"no export {job_id!r}")
        return job

    def expires_in(self, job: MoveJob) -> int:
        """Seconds until an ended job (and an export's archive) is forgotten."""
        if job.expires_at is None:
            return int(self.ttl)
        return max(0, int(job.expires_at - self.clock()))

    def wait(self, job: MoveJob, seconds: float) -> MoveJob:
        """Until the job ends or `seconds` pass (the MCP tool answers once it can)."""
        deadline, pause = time.monotonic() + seconds, 0.05
        while job.status == "running" and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(pause * 1.5, 1.0)
        return job

    # -- import ----------------------------------------------------------------------------

    def spool_file(self) -> Path:
        """Where an upload is written before it is read: a folder of its own in this
        process's spool (the archive's messages name it `archive.zip`, nothing of ours)."""
        folder = self.spool / f"upload-{new_id()}"
        folder.mkdir(parents=True)
        return folder / "archive.zip"

    @staticmethod
    def discard(upload: Path) -> None:
        """An upload's file and its folder, gone."""
        upload.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            upload.parent.rmdir()

    def check(self, path: Path) -> dict[str, Any]:
        """The archive's manifest, once the whole archive is checked (ArchiveError if not):
        what the import refuses, refused before any library is made."""
        policy = self._parts().policy
        reader = ArchiveReader(path, max_file_bytes=policy.max_file_bytes)
        try:
            return reader.check(policy.path)
        finally:
            reader.close()

    def start_import(
        self, path: Path, *, workspace_id: str, name: str, by: str | None, with_people: bool
    ) -> MoveJob:
        """Read the checked archive at `path` into the library just made for it (its id and
        name);
        the upload is deleted when done. `with_people` False (a person who is not an admin):
        the conversations and marked answers are not imported (they would be others' words
        put in others' names), and the quota and the sources' rules of people apply."""
        parts = replace(self._parts(), audit=None, operator=False)
        if not with_people:
            parts = replace(parts, conversations=None, answers=None)
        job = self._admit("import", workspace_id, by)
        job.path = path
        progress = ImportProgress(total=job.phase_of, step=job.step)

        def run() -> None:
            try:
                report = import_library(parts, path, library=workspace_id, progress=progress)
                report.library_name = name  # asked for by its id, named by its name
                job.imported = report
            finally:
                self.discard(path)

        self._run(job, run, keep=False)
        return job

    def imported(self, user_id: str | None, job_id: str) -> MoveJob:
        """The import `job_id`, for the person who started it only."""
        job = self._jobs.get(job_id)
        if job is None or job.kind != "import" or job.started_by != user_id or user_id is None:
            raise NotFoundError(f"no import {job_id!r}")
        return job

    # -- the jobs --------------------------------------------------------------------------

    def _admit(
        self, kind: Literal["export", "import"], workspace_id: str, by: str | None
    ) -> MoveJob:
        self._sweep()
        with self._lock:
            running = sum(1 for j in self._jobs.values() if j.status == "running")
            if running >= self.max_running:
                raise TooManyRequestsError(
                    f"{running} libraries are being moved already: try again soon",
                    retry_after=RETRY_AFTER,
                )
            job = MoveJob(id=new_id(), kind=kind, workspace_id=workspace_id, started_by=by)
            self._jobs[job.id] = job
        self.spool.mkdir(parents=True, exist_ok=True)
        return job

    def _run(self, job: MoveJob, work: Callable[[], None], *, keep: bool) -> None:
        def target() -> None:
            try:
                work()
            except Exception as exc:  # the job's answer; the next poll reads it
                job.end(exc, at=utcnow())
            else:
                job.end(None, at=utcnow())
            job.expires_at = self.clock() + self.ttl
            if not keep and job.path is not None:
                self.discard(job.path)

        threading.Thread(target=target, name=f"bunko-{job.kind}-{job.id}", daemon=True).start()

    def _sweep(self) -> None:
        """Forget ended jobs past their time, deleting their archives."""
        now = self.clock()
        with self._lock:
            gone = [
                j for j in self._jobs.values() if j.expires_at is not None and j.expires_at < now
            ]
            for job in gone:
                del self._jobs[job.id]
        for job in gone:
            if job.path is not None:
                job.path.unlink(missing_ok=True)
