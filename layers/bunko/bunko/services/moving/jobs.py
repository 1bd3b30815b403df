"""Moves started at the REST and MCP doors (docs/owners.md, "Moving a library"). A job's
record, its archive and the worker that runs it are ports (ports/moves.py), so a poll or a
download served by any process (any Lambda execution environment) reads the job another
started: on the embedded shape a row of the metadata database, a private folder and a thread
of the server; on AWS an item of the table (with a TTL), the bucket and the ingest function,
which the API reaches with a message on the ingest queue. `bunko export` / `bunko import`
call export_library / import_library directly.

The worker (`run`) saves the record as it goes (progress at most every `save_every`
seconds). In the ingest function an import writes the documents, then looks at their
indexing in later messages of its own (`_import`); an invocation that died (its 10
minutes) is delivered again by the queue and, the import being idempotent, goes on where
the last one stopped.

The doors record each request in the audit trail themselves (one event a request), so the
parts these jobs use carry no trail of their own.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from bunko.domain import new_id, utcnow
from bunko.errors import NotFoundError, TooManyRequestsError
from bunko.ports.moves import ArchiveSpace, MoveJobStore, MoveRecord, MoveRunner, TimeLeft
from bunko.services.moving.archive import ArchiveReader
from bunko.services.moving.export import ExportReport, export_library
from bunko.services.moving.imports import ImportProgress, ImportReport, import_library
from bunko.services.moving.items import restore_items
from bunko.services.moving.parts import MovingParts

EXPORT_TTL = 15 * 60  # seconds an export's archive waits for its download
MAX_RUNNING = 2  # moves at once: each reads or writes a whole library
RETRY_AFTER = 30
SAVE_EVERY = 0.5  # seconds between saves of a running job's progress
MAX_ATTEMPTS = 2  # a job whose invocation died twice fails (before the dead-letter queue)
RECHECK = 10  # seconds between looks at an import's indexing, in the ingest function

Status = Literal["running", "done", "failed"]


@dataclass
class MoveJob:
    """One export or import, as its store keeps it (`record` / `from_record`)."""

    id: str
    kind: Literal["export", "import"]
    workspace_id: str  # the library exported, or the one imported into
    started_by: str | None  # the person's user id
    status: Status = "running"
    phase: str = ""  # "exporting", "importing", "indexing"
    done: int = 0
    total: int = 0
    error: str | None = None
    started_at: datetime = field(default_factory=utcnow)
    finished_at: datetime | None = None
    expires_at: float | None = None  # seconds since the epoch: the job and its archive go
    ttl: float = EXPORT_TTL
    archive: str | None = None  # the archive's key (an export's, or the upload an import reads)
    link: str = field(default_factory=lambda: secrets.token_urlsafe(32))  # download secret
    options: dict[str, Any] = field(default_factory=dict)  # what the door asked for
    runner: str = ""  # host:pid of the embedded server that runs it
    attempts: int = 0  # invocations that started its work (a stopped one is run again)
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

    def record(self) -> MoveRecord:
        out = asdict(self)
        out["started_at"] = self.started_at.isoformat()
        out["finished_at"] = self.finished_at.isoformat() if self.finished_at else None
        return out

    @classmethod
    def from_record(cls, record: MoveRecord) -> MoveJob:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in record.items() if k in known}
        values["started_at"] = datetime.fromisoformat(record["started_at"])
        if record.get("finished_at"):
            values["finished_at"] = datetime.fromisoformat(record["finished_at"])
        if record.get("exported"):
            values["exported"] = ExportReport(**record["exported"])
        if record.get("imported"):
            values["imported"] = ImportReport(**record["imported"])
        return cls(**values)


def archive_link(job: MoveJob) -> str:
    """Where the REST door serves a finished export's archive: a path with its download
    secret (http/routes/moving.py), which the MCP tool gives too. On AWS that path answers
    with a redirect to the archive in the bucket."""
    return f"/libraries/{job.workspace_id}/export/{job.id}/archive?link={job.link}"


def _this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class LibraryMoves:
    """The moves of this shape. `parts` builds the moving parts of the running services;
    `runner` None: a thread of this process runs each job."""

    def __init__(
        self,
        parts: Callable[[], MovingParts],
        *,
        jobs: MoveJobStore,
        archives: ArchiveSpace,
        runner: MoveRunner | None = None,
        ttl: float = EXPORT_TTL,
        max_running: int = MAX_RUNNING,
        clock: Callable[[], float] = time.time,  # what the TTL is counted on
        save_every: float = SAVE_EVERY,
        recheck: int = RECHECK,
    ) -> None:
        self._parts = parts
        self.jobs, self.archives = jobs, archives
        self.runner: MoveRunner = runner or _Threads(self.run)
        self.clock = clock
        self.ttl = ttl
        self.max_running = max_running
        self.save_every = save_every
        self.recheck = recheck

    # -- export ----------------------------------------------------------------------------

    def start_export(
        self, workspace_id: str, *, by: str | None, conversations: bool, vectors: bool
    ) -> MoveJob:
        """Start writing the library's archive (the caller checked that `by` owns it)."""
        total = self._parts().library.count_documents(workspace_id)  # before a slot is taken
        job = self._admit("export", workspace_id, by)
        job.options = {"conversations": conversations, "vectors": vectors}
        job.phase_of("exporting", total)
        return self._start(job)

    def export(self, workspace_id: str, job_id: str) -> MoveJob:
        """The library's export `job_id`; NotFoundError once expired or for another library."""
        self._sweep()
        job = self._get(job_id)
        if job is None or job.kind != "export" or job.workspace_id != workspace_id:
            raise NotFoundError(
                f"no export {job_id!r} (an archive is kept {self.ttl // 60:.0f} min)"
            )
        return job

    def archive(self, workspace_id: str, job_id: str) -> MoveJob:
        """The finished export whose archive is there to download."""
        job = self.export(workspace_id, job_id)
        if job.status != "done" or job.archive is None:
            raise NotFoundError(f"export {job_id!r} has no archive ({job.status})")
        if self.archives.served_here and self.archives.local(job.archive) is None:
            raise NotFoundError(f"export {job_id!r} has no archive (gone)")
        return job

    def linked(self, workspace_id: str, job_id: str, link: str) -> MoveJob:
        """The finished export that `link` (its download secret) opens, without a token."""
        job = self.archive(workspace_id, job_id)
        if not secrets.compare_digest(job.link.encode(), link.encode()):
            raise NotFoundError(f"no export {job_id!r}")
        return job

    def archive_bytes(self, job: MoveJob) -> bytes:
        """A finished export's archive whole (the MCP tool embeds a small one)."""
        assert job.archive is not None
        here = self.archives.local(job.archive)
        if here is not None:
            return here.read_bytes()
        path = self.archives.fetch(job.archive)
        try:
            return path.read_bytes()
        finally:
            self.archives.discard(path)

    def expires_in(self, job: MoveJob) -> int:
        """Seconds until an ended job (and an export's archive) is forgotten."""
        if job.expires_at is None:
            return int(self.ttl)
        return max(0, int(job.expires_at - self.clock()))

    def wait(self, job: MoveJob, seconds: float) -> MoveJob:
        """The job once it ends or `seconds` pass (the MCP tool answers once it can)."""
        deadline, pause = time.monotonic() + seconds, 0.05
        while job.status == "running" and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(pause * 1.5, 1.0)
            job = self._get(job.id) or job
        return job

    # -- import ----------------------------------------------------------------------------

    def spool_file(self) -> Path:
        """Where an upload is written before it is read: a folder of its own on this machine
        (the archive's messages name it `archive.zip`, nothing of ours)."""
        return self.archives.scratch("archive.zip")

    def discard(self, upload: Path) -> None:
        """An upload's file and its folder, gone."""
        self.archives.discard(upload)

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
        self,
        path: Path,
        *,
        workspace_id: str,
        name: str,
        by: str | None,
        with_people: bool,
        kept: str | None = None,
    ) -> MoveJob:
        """Read the checked archive at `path` into the library just made for it (its id and
        name); the upload is kept where the worker reads it, and deleted when done.
        `with_people` False (a person who is not an admin): the conversations and marked
        answers are not imported (they would be others' words put in others' names), and
        the quota and the sources' rules of people apply. `kept`: the archive is there
        already under that key (a signed upload), `path` only this process's copy."""
        try:
            job = self._admit("import", workspace_id, by)
            job.options = {"name": name, "with_people": with_people}
            job.archive = kept or job.id
            if kept is None:
                self.archives.keep(job.archive, path)
        finally:
            self.discard(path)
        return self._start(job)

    def upload_key(self, user_id: str) -> str:
        """A new key for a person's signed upload of an archive (only theirs to import)."""
        return f"upload-{user_id}-{secrets.token_hex(16)}"

    @staticmethod
    def uploaded_by(key: str, user_id: str) -> bool:
        return key.startswith(f"upload-{user_id}-")

    def imported(self, user_id: str | None, job_id: str) -> MoveJob:
        """The import `job_id`, for the person who started it only."""
        job = self._get(job_id)
        if job is None or job.kind != "import" or job.started_by != user_id or user_id is None:
            raise NotFoundError(f"no import {job_id!r}")
        return job

    # -- the worker ------------------------------------------------------------------------

    def run(self, job_id: str, time_left: TimeLeft | None = None) -> None:
        """Do the job (a thread of the server, or the ingest function's invocation with its
        `time_left`). A job no longer running (a message delivered twice) is left alone."""
        job = self._get(job_id)
        if job is None or job.status != "running":
            return
        saver = _Saver(self, job)
        if job.phase != "indexing":  # its work, not a look at the indexing
            job.attempts += 1
            self.jobs.save(job.record())
        try:
            if job.attempts > MAX_ATTEMPTS:
                raise RuntimeError(
                    f"stopped {MAX_ATTEMPTS} times before its end (the function's time limit?)"
                )
            if job.kind == "export":
                self._export(job, saver)
            elif not self._import(job, saver, time_left):
                return  # goes on in the next invocation
        except Exception as exc:  # the job's answer; the next poll reads it
            job.end(exc, at=utcnow())
        else:
            job.end(None, at=utcnow())
        job.expires_at = self.clock() + self.ttl
        if job.kind == "import" and job.archive is not None:
            self.archives.delete(job.archive)
            job.archive = None
        self.jobs.save(job.record())

    def _export(self, job: MoveJob, saver: _Saver) -> None:
        parts = replace(self._parts(), audit=None)
        path = self.archives.scratch("archive.zip")
        try:
            job.exported = export_library(
                parts,
                job.workspace_id,
                path,
                conversations=bool(job.options.get("conversations")),
                vectors=bool(job.options.get("vectors")),
                progress=saver.step,
            )
            self.archives.keep(job.id, path)
        finally:
            self.archives.discard(path)
        job.archive = job.id

    def _import(self, job: MoveJob, saver: _Saver, time_left: TimeLeft | None) -> bool:
        """True once the import ended; False when it queued itself to go on later.

        In a thread (`time_left` None) the import waits for its documents' indexing, as
        `bunko import` does. In the ingest function it does not: that would hold one of
        the few invocations that index them (two in a small deployment). It writes the
        documents, then looks again every `recheck` seconds, each look a message of its own,
        and once every document is indexed restores the passages edited by hand."""
        parts = replace(self._parts(), audit=None, operator=False)
        if not job.options.get("with_people"):
            parts = replace(parts, conversations=None, answers=None)
        if job.imported is None or job.phase != "indexing":
            assert job.archive is not None
            path = self.archives.fetch(job.archive)
            try:
                report = import_library(
                    parts,
                    path,
                    library=job.workspace_id,
                    progress=ImportProgress(total=saver.phase_of, step=saver.step),
                    wait_seconds=3600.0 if time_left is None else 0.0,
                )
            finally:
                self.archives.discard(path)
            report.library_name = str(job.options.get("name") or report.library_name)
            job.imported = report
            if not report.pending or time_left is None:
                return True
        else:
            report = job.imported
            _look_again(parts, job, report, saver)
            if not report.pending:
                self._restore(parts, job, report)
                return True
        job.phase = "indexing"
        self.jobs.save(job.record())
        self.runner.start(job.id, delay=self.recheck)
        return False

    def _restore(self, parts: MovingParts, job: MoveJob, report: ImportReport) -> None:
        """The passages edited or deleted by hand, once every document is indexed."""
        assert job.archive is not None
        path = self.archives.fetch(job.archive)
        reader = ArchiveReader(path, max_file_bytes=parts.policy.max_file_bytes)
        try:
            paths = {}
            for record in reader.documents():
                if record.get("items"):
                    doc = parts.ingest.document_at(
                        job.workspace_id, parts.policy.path(record["path"])
                    )
                    if doc is not None:
                        paths[record["path"]] = doc.id
            edited, deleted = restore_items(parts, reader, job.workspace_id, paths, report.skipped)
        finally:
            reader.close()
            self.archives.discard(path)
        report.items_edited += edited
        report.items_deleted += deleted

    # -- the jobs --------------------------------------------------------------------------

    def _get(self, job_id: str) -> MoveJob | None:
        record = self.jobs.get(job_id)
        return MoveJob.from_record(record) if record is not None else None

    def _admit(
        self, kind: Literal["export", "import"], workspace_id: str, by: str | None
    ) -> MoveJob:
        self._sweep()
        running = self.jobs.running()
        if running >= self.max_running:
            raise TooManyRequestsError(
                f"{running} libraries are being moved already: try again soon",
                retry_after=RETRY_AFTER,
            )
        return MoveJob(
            id=new_id(), kind=kind, workspace_id=workspace_id, started_by=by, ttl=self.ttl
        )

    def _start(self, job: MoveJob) -> MoveJob:
        if self.archives.served_here:
            job.runner = _this_process()
        self.jobs.save(job.record())
        try:
            self.runner.start(job.id)
        except Exception as exc:  # not queued: the job ends here, its slot free
            job.end(exc, at=utcnow())
            job.expires_at = self.clock() + self.ttl
            self.jobs.save(job.record())
            raise
        return job

    def _sweep(self) -> None:
        """Forget ended jobs past their time, deleting their archives."""
        for record in self.jobs.expired(self.clock()):
            if record.get("archive"):
                self.archives.delete(record["archive"])
            self.jobs.forget(record["id"])


class _Threads:
    """The default runner: the job in a daemon thread of this process, which waits for its
    import's indexing itself (nothing is run again later: `delay` is not needed)."""

    def __init__(self, run: Callable[[str], None]) -> None:
        self.run = run

    def start(self, job_id: str, *, delay: int = 0) -> None:
        threading.Thread(
            target=self.run, args=(job_id,), name=f"bunko-move-{job_id}", daemon=True
        ).start()


class _Saver:
    """The job's progress, saved to its store at most every `save_every` seconds."""

    def __init__(self, moves: LibraryMoves, job: MoveJob) -> None:
        self.moves, self.job, self.last = moves, job, 0.0

    def step(self, n: int) -> None:
        self.job.step(n)
        self._save()

    def phase_of(self, label: str, total: int) -> None:
        self.job.phase_of(label, total)
        self._save(force=True)

    def _save(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= self.moves.save_every:
            self.last = now
            self.moves.jobs.save(self.job.record())


def _look_again(parts: MovingParts, job: MoveJob, report: ImportReport, saver: _Saver) -> None:
    """The documents an earlier invocation left indexing: those settled since are counted."""
    for path in list(report.pending):
        doc = parts.ingest.document_at(job.workspace_id, path)
        if doc is None or doc.settled:
            report.pending.remove(path)
            saver.step(1)
            report.settled(path, doc)
