"""The doors' move jobs (services/moving/jobs.py) on real services: at most `max_running` run
at once in a process (the next is refused with a Retry-After, and takes no slot), a finished
export's archive is there for its TTL and then gone with the job."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from bunko.adapters.local.moves import FolderArchives, SqliteMoveJobs
from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.bootstrap.moving import moving_parts
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.errors import NotFoundError, TooManyRequestsError
from bunko.services.ingest import Upload
from bunko.services.moving.jobs import LibraryMoves
from tests.conftest import make_services


class GatedBlobs:
    """The blob store, whose reads wait until the gate opens: an export kept running."""

    def __init__(self, blobs, gate: threading.Event) -> None:
        self.blobs, self.gate = blobs, gate

    def get(self, key: str) -> bytes:
        self.gate.wait(30)
        return self.blobs.get(key)

    def __getattr__(self, name):
        return getattr(self.blobs, name)


@pytest.fixture
def pier_library(tmp_path):
    pier_library = make_services(tmp_path / "data", embedder="none")
    doc = pier_library.ingest.submit(Upload(DEFAULT_WORKSPACE_ID, b"The pier.", path="pier.txt"))
    pier_library.library.wait_until_indexed(DEFAULT_WORKSPACE_ID, doc.id, timeout=60)
    yield pier_library
    pier_library.close()


def test_moves_at_once_are_bounded_and_an_archive_lasts_its_ttl(pier_library, tmp_path):
    gate = threading.Event()
    parts = replace(moving_parts(pier_library), blobs=GatedBlobs(pier_library.blobs, gate))
    now = [1000.0]
    moves = LibraryMoves(
        lambda: parts,
        jobs=SqliteMoveJobs(SqliteDatabase(tmp_path / "moves.db"), clock=lambda: now[0]),
        archives=FolderArchives(tmp_path / "moves"),
        ttl=900,
        max_running=1,
        clock=lambda: now[0],
    )
    first = moves.start_export(DEFAULT_WORKSPACE_ID, by=None, conversations=False, vectors=False)
    for _ in range(2):  # refused, and the refusal took no slot
        with pytest.raises(TooManyRequestsError) as refused:
            moves.start_export(DEFAULT_WORKSPACE_ID, by=None, conversations=False, vectors=False)
        assert refused.value.retry_after == 30
    gate.set()
    first = moves.wait(first, 30)
    assert first.status == "done" and first.exported.documents == 1
    archive = moves.archives.local(moves.linked(DEFAULT_WORKSPACE_ID, first.id, first.link).archive)
    assert archive is not None and archive.is_file()
    with pytest.raises(NotFoundError):
        moves.linked(DEFAULT_WORKSPACE_ID, first.id, "x" * 43)
    second = moves.start_export(DEFAULT_WORKSPACE_ID, by=None, conversations=False, vectors=False)
    second = moves.wait(second, 30)
    assert second.status == "done"
    assert moves.expires_in(first) == 900
    now[0] += 901  # past the TTL: the next look forgets both, archives too
    with pytest.raises(NotFoundError):
        moves.export(DEFAULT_WORKSPACE_ID, first.id)
    assert not archive.exists()


def test_a_job_whose_server_stopped_reads_failed_interrupted_after_a_restart(tmp_path):
    """The record outlives the server: a poll after a restart answers what happened to the
    job, not a 404. A job another running process still runs is left alone."""
    import socket
    import subprocess
    import sys

    from bunko.services.moving.jobs import MoveJob

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    host = socket.gethostname()
    db = SqliteDatabase(tmp_path / "moves.db")
    jobs = SqliteMoveJobs(db)
    stopped = MoveJob(id="a" * 26, kind="export", workspace_id="w", started_by="u",
                      runner=f"{host}:{ended.stdout.strip()}")  # fmt: skip
    alive = replace(stopped, id="b" * 26, runner=f"{host}:{__import__('os').getpid()}")
    jobs.save(stopped.record())
    jobs.save(alive.record())
    assert jobs.running() == 2
    restarted = SqliteMoveJobs(SqliteDatabase(tmp_path / "moves.db"))
    job = MoveJob.from_record(restarted.get(stopped.id))
    assert (job.status, job.error) == ("failed", "interrupted: the server stopped while it ran")
    assert job.finished_at is not None and job.expires_at is not None
    assert MoveJob.from_record(restarted.get(alive.id)).status == "running"
    assert restarted.running() == 1


class Held:
    """A runner that only records what was started (the queue's messages, not delivered)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int]] = []

    def start(self, job_id: str, *, delay: int = 0) -> None:
        self.sent.append((job_id, delay))


def test_a_move_whose_invocation_died_goes_on_when_delivered_again_and_fails_the_third_time(
    pier_library, tmp_path
):
    """The queue delivers a move again after its invocation died: the import, idempotent,
    runs again to its end; a job whose work started twice already fails on the next."""
    import shutil

    from bunko.services.moving import export_library

    parts = moving_parts(pier_library)
    archive = tmp_path / "pier.zip"
    export_library(parts, DEFAULT_WORKSPACE_ID, archive)
    runner = Held()
    moves = LibraryMoves(
        lambda: parts,
        jobs=SqliteMoveJobs(SqliteDatabase(tmp_path / "moves.db")),
        archives=FolderArchives(tmp_path / "moves"),
        runner=runner,
    )
    copies = []
    for name in ("Pier copy", "Pier again"):
        library = pier_library.accounts.libraries.create_for_operator(name)
        upload = moves.spool_file()
        shutil.copy(archive, upload)
        job = moves.start_import(
            upload, workspace_id=library.id, name=name, by="u", with_people=False
        )
        copies.append((library, job))
    assert runner.sent == [(job.id, 0) for _, job in copies]  # queued, not run
    (library, died), (_, twice) = copies
    # the first delivery's invocation died as it started: the record says one attempt
    record = moves.jobs.get(died.id)
    moves.jobs.save({**record, "attempts": 1, "phase": "importing"})
    moves.run(died.id)  # delivered again
    done = moves.imported("u", died.id)
    assert (done.status, done.attempts, done.imported.added) == ("done", 2, 1), done.error
    assert pier_library.ingest.document_at(library.id, "pier.txt") is not None
    assert moves.archives.local(died.id) is None  # the upload, gone once imported
    moves.run(died.id)  # a fourth delivery of an ended job changes nothing
    assert moves.imported("u", died.id).attempts == 2
    moves.jobs.save({**moves.jobs.get(twice.id), "attempts": 2})
    moves.run(twice.id)
    failed = moves.imported("u", twice.id)
    assert failed.status == "failed" and "stopped 2 times" in failed.error
    assert moves.jobs.running() == 0
