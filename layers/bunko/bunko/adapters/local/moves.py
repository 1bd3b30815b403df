"""The embedded shape's move ports (ports/moves.py): job records in the metadata database,
archives in a private folder of the data folder (the work: a thread of the server, the
services' default).

A server stopped while a job ran leaves a record that nothing will finish: the next server
marks it failed ("interrupted"), so a poll answers that rather than a 404."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain import new_id, utcnow
from bunko.errors import NotFoundError
from bunko.ports.moves import MoveRecord
from bunko.ports.uploads import SignedUpload

INTERRUPTED = "interrupted: the server stopped while it ran"


def _alive(runner: str) -> bool:
    """Whether the process `host:pid` that runs a job is still running on this machine."""
    host, _, pid = runner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process of that id
    return True


class SqliteMoveJobs:
    def __init__(self, db: SqliteDatabase, *, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.clock = clock
        self._interrupt()

    def _interrupt(self) -> None:
        """Jobs a stopped server left running (no thread of this process runs them)."""
        rows = (
            self.db.connect()
            .execute("SELECT record FROM move_jobs WHERE status = 'running'")
            .fetchall()
        )
        for row in rows:
            record = json.loads(row["record"])
            if _alive(str(record.get("runner") or "")):
                continue  # another server (or a command) on this data folder still runs it
            record.update(
                status="failed",
                error=INTERRUPTED,
                finished_at=utcnow().isoformat(),
                expires_at=self.clock() + float(record.get("ttl") or 900),
            )
            self.save(record)

    def save(self, record: MoveRecord) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO move_jobs (id, status, record, expires) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET status = excluded.status, "
                "record = excluded.record, expires = excluded.expires",
                (record["id"], record["status"], json.dumps(record), record.get("expires_at")),
            )

    def get(self, job_id: str) -> MoveRecord | None:
        row = (
            self.db.connect()
            .execute("SELECT record, expires FROM move_jobs WHERE id = ?", (job_id,))
            .fetchone()
        )
        if row is None or (row["expires"] is not None and row["expires"] < self.clock()):
            return None
        return json.loads(row["record"])

    def running(self) -> int:
        row = (
            self.db.connect()
            .execute("SELECT count(*) AS n FROM move_jobs WHERE status = 'running'")
            .fetchone()
        )
        return int(row["n"])

    def expired(self, now: float) -> list[MoveRecord]:
        rows = (
            self.db.connect()
            .execute(
                "SELECT record FROM move_jobs WHERE expires IS NOT NULL AND expires < ?", (now,)
            )
            .fetchall()
        )
        return [json.loads(row["record"]) for row in rows]

    def forget(self, job_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM move_jobs WHERE id = ?", (job_id,))


class FolderArchives:
    """Archives in `root` (the data folder's, private): `<key>.zip`, served by this process."""

    served_here = True

    def __init__(self, root: Path) -> None:
        self.root = root

    def scratch(self, name: str) -> Path:
        folder = self.root / f"scratch-{new_id()}"
        folder.mkdir(parents=True, mode=0o700)
        return folder / name

    def _path(self, key: str) -> Path:
        if not key.replace("-", "").replace("_", "").isalnum():
            raise NotFoundError(f"no archive {key!r}")
        return self.root / f"{key}.zip"

    def keep(self, key: str, path: Path) -> None:
        target = self._path(key)
        if path != target:
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.move(path, target)
            self.discard(path)

    def fetch(self, key: str) -> Path:
        path = self._path(key)
        if not path.is_file():
            raise NotFoundError(f"no archive {key!r}")
        return path

    def local(self, key: str) -> Path | None:
        path = self._path(key)
        return path if path.is_file() else None

    def link(self, key: str, filename: str, seconds: int) -> str:
        raise NotImplementedError("served by this process")

    def upload_link(self, key: str, size: int, seconds: int) -> SignedUpload:
        raise NotImplementedError("the archive comes in the request: POST /libraries/import")

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def discard(self, path: Path) -> None:
        if path.parent == self.root:
            return  # a kept archive (what `fetch` gives here), not a scratch copy
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            path.parent.rmdir()
