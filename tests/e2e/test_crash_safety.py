"""Crash safety (issue 13, point 2): a real `bunko serve` is killed with SIGKILL in the middle
of ingesting many dropped files (and a real `bunko reindex` in the middle of a rebuild), then
started again: every file ends `completed`, none is left `indexing`, none is duplicated, and
the search index holds exactly the chunks metadata holds. The startup check says what it
repaired in the log."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx

from bunko.config import Settings
from tests.conftest import make_services
from tests.e2e.test_cli import BUNKO, free_port

FILES = 120
WORDS = ["harbour", "lantern", "granite", "meadow", "thistle", "copper", "willow", "saffron"]


def _env(data: Path) -> dict[str, str]:
    return {**os.environ, "BUNKO_DATA_DIR": str(data), "BUNKO_EMBEDDER": "none"}


def _serve(data: Path, log: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    server = subprocess.Popen(
        [*BUNKO, "serve", "--port", str(port)],
        env=_env(data),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
            return server, port
        except httpx.TransportError:
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)


def _statuses(data: Path) -> dict[str, int]:
    with sqlite3.connect(Settings(data_dir=data).data_dir / "bunko.db", timeout=30) as db:
        rows = db.execute("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall()
    return dict(rows)


def _wait(data: Path, until, timeout: float = 300) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        found = _statuses(data)
        if until(found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


def _write_files(drop: Path) -> None:
    drop.mkdir(parents=True, exist_ok=True)
    for n in range(FILES):
        word = WORDS[n % len(WORDS)]
        body = f"File {n} is about the {word} number {n}x{n}. " * 2000  # ~100 KB, many chunks
        (drop / f"f{n:03d}.txt").write_text(body, encoding="utf-8")


def _check_consistent(data: Path) -> None:
    services = make_services(data, embedder="none")
    try:
        docs = list(services.metadata.iter_documents())
        assert len(docs) == FILES and len({d.path for d in docs}) == FILES
        assert all(d.status.value == "completed" for d in docs), [d.error for d in docs]
        for doc in docs:
            chunks = services.metadata.get_chunks(doc.workspace_id, doc.id)
            assert len(chunks) == doc.chunk_count
            assert [c.index for c in chunks] == list(range(doc.chunk_count))
            assert {c.revision for c in chunks} == {doc.revision} == {1}
        assert services.index.count() == services.metadata.count_chunks()
    finally:
        services.close()


def test_sigkill_mid_ingest_then_restart_loses_and_duplicates_nothing(tmp_path):
    data, log = tmp_path / "data", tmp_path / "serve.log"
    server, _ = _serve(data, log)
    _write_files(data / "drop")
    at_kill = _wait(data, lambda s: s.get("completed", 0) >= 5 and sum(s.values()) >= 20)
    os.kill(server.pid, signal.SIGKILL)
    server.wait(timeout=30)
    at_kill = _statuses(data)
    unfinished = at_kill.get("pending", 0) + at_kill.get("indexing", 0)
    server, _ = _serve(data, log)
    try:
        _wait(data, lambda s: s.get("completed", 0) == FILES)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    _check_consistent(data)
    text = log.read_text()
    assert "Traceback" not in text
    if unfinished:
        assert f"startup check: re-queued {unfinished} unfinished documents" in text, text[-2000:]
    print(f"\ncrash test: killed with {at_kill} ({unfinished} unfinished); all {FILES} completed")


def test_sigkill_mid_reindex_is_repaired_at_the_next_start(tmp_path):
    data, log = tmp_path / "data", tmp_path / "serve.log"
    server, _ = _serve(data, log)
    _write_files(data / "drop")
    try:
        _wait(data, lambda s: s.get("completed", 0) == FILES)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    reindex = subprocess.Popen(
        [*BUNKO, "reindex"], env=_env(data), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    # Kill it once it has cleared the index and started writing it again.
    deadline = time.monotonic() + 120
    progress = b""
    while b"reindex:" not in progress and time.monotonic() < deadline:
        progress += os.read(reindex.stderr.fileno(), 256)
    time.sleep(0.3)
    os.kill(reindex.pid, signal.SIGKILL)
    reindex.wait(timeout=30)
    server, port = _serve(data, log)
    try:
        deadline = time.monotonic() + 300
        while "startup check: index rebuilt" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).json()
        assert health["documents"] == FILES
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    assert "startup check: the search index holds" in log.read_text()
    _check_consistent(data)
