"""Crash safety (issue 13, point 2): a real `bunko serve` is killed with SIGKILL in the middle
of ingesting many dropped files (a real `bunko reindex` in the middle of a rebuild, and a
server in the middle of re-embedding for a new model), then started again: every file ends
`completed`, none is left `indexing`, none is duplicated, and the search index holds exactly
the chunks metadata holds. The startup check says what it repaired in the log."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from bunko.adapters.local.engine import GenerationMarks
from bunko.adapters.local.lsa_embedder import LsaEmbedder
from bunko.adapters.local.use_embedder import UniversalSentenceEncoderEmbedder
from bunko.bootstrap import index_generation
from bunko.config import Settings
from tests.conftest import make_services
from tests.e2e.cli_harness import BUNKO, bunko_env, mcp_search, serve_bunko
from tests.topics import QUERY, TOPICS

pytestmark = pytest.mark.slow  # real `bunko serve` processes killed mid-ingest, models loaded

FILES = 120
WORDS = ["harbour", "lantern", "granite", "meadow", "thistle", "copper", "willow", "saffron"]


def _serve_until(data: Path, log: Path, files: int, embedder: str = "none") -> None:
    """Run a server until `files` documents are completed, then stop it cleanly."""
    server, _ = serve_bunko(data, log, embedder)
    try:
        _wait(data, lambda s: s.get("completed", 0) == files)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


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


def _check_consistent(data: Path, files: int = FILES, embedder: str = "none") -> None:
    """Every document completed with its chunks 0..n-1 of revision 1, and `embedder`'s index
    generation holding as many entries as metadata holds chunks."""
    services = make_services(data, embedder=embedder)
    try:
        docs = list(services.metadata.iter_documents())
        assert len(docs) == files and len({d.path for d in docs}) == files
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
    server, _ = serve_bunko(data, log)
    _write_files(data / "drop")
    at_kill = _wait(data, lambda s: s.get("completed", 0) >= 5 and sum(s.values()) >= 20)
    os.kill(server.pid, signal.SIGKILL)
    server.wait(timeout=30)
    at_kill = _statuses(data)
    unfinished = at_kill.get("pending", 0) + at_kill.get("indexing", 0)
    _serve_until(data, log, FILES)
    _check_consistent(data)
    text = log.read_text()
    assert "Traceback" not in text
    if unfinished:
        assert f"startup check: re-queued {unfinished} unfinished documents" in text, text[-2000:]
    print(f"\ncrash test: killed with {at_kill} ({unfinished} unfinished); all {FILES} completed")


def test_sigkill_mid_reindex_is_repaired_at_the_next_start(tmp_path):
    data, log = tmp_path / "data", tmp_path / "serve.log"
    _write_files(data / "drop")
    _serve_until(data, log, FILES)
    reindex = subprocess.Popen(
        [*BUNKO, "reindex"], env=bunko_env(data), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    # Kill it once it has cleared the index and started writing it again.
    deadline = time.monotonic() + 120
    progress = b""
    while b"reindex:" not in progress and time.monotonic() < deadline:
        progress += os.read(reindex.stderr.fileno(), 256)
    time.sleep(0.3)
    os.kill(reindex.pid, signal.SIGKILL)
    reindex.wait(timeout=30)
    server, port = serve_bunko(data, log)
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


# --- a kill during a model switch ---

SWITCH_FILES = 20


def _generation(data: Path, embedder) -> Path:
    return Settings(data_dir=data).index_dir / index_generation(embedder) / "index.db"


def _entries(db: Path) -> list[tuple[str, bytes | None]]:
    """(chunk id, vector bytes) of every entry of one index generation, by chunk id."""
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute("SELECT chunk_id, vector FROM entries ORDER BY chunk_id").fetchall()


def _with_vectors(db: Path) -> int:
    """Entries that have their vector (a rebuild writes every keyword entry first)."""
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute("SELECT count(*) FROM entries WHERE vector IS NOT NULL").fetchone()[0]


def _documents_indexed(data: Path, db: Path) -> tuple[int, int]:
    """(documents with every chunk's vector in the generation, documents with some)."""
    with sqlite3.connect(Settings(data_dir=data).data_dir / "bunko.db", timeout=30) as meta:
        expected = dict(meta.execute("SELECT id, chunk_count FROM documents").fetchall())
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        found = conn.execute(
            "SELECT document_id, count(*) FROM entries WHERE vector IS NOT NULL"
            " GROUP BY document_id"
        )
        counts = dict(found.fetchall())
    full = sum(1 for doc, n in counts.items() if n == expected[doc])
    return full, len(counts) - full


def _write_topics(drop: Path) -> None:
    drop.mkdir(parents=True, exist_ok=True)
    for n in range(SWITCH_FILES):
        body = "".join(f"Note {n}.{i}: {TOPICS[n % len(TOPICS)]} " for i in range(440))
        (drop / f"t{n:02d}.txt").write_text(body, encoding="utf-8")  # ~26 KB, ~34 chunks


def test_sigkill_during_a_model_switch_is_repaired_at_the_next_start(tmp_path):
    data, log = tmp_path / "data", tmp_path / "serve.log"
    # Model A: LSA, trained on the corpus (`bunko reindex --retrain`) so its generation
    # holds vectors too (256 dimensions).
    _write_topics(data / "drop")
    _serve_until(data, log, SWITCH_FILES, "lsa")
    subprocess.run([*BUNKO, "reindex", "--retrain"], env=bunko_env(data, "lsa"), check=True,
                   capture_output=True, timeout=600)  # fmt: skip
    model_a_db = _generation(data, LsaEmbedder(dimension=Settings().lsa_dimension))
    model_a = _entries(model_a_db)
    chunks = len(model_a)
    assert chunks > 512 and all(v is not None and len(v) == 2 * 256 for _, v in model_a)

    # Model B (USE, 512 dimensions): its empty generation is rebuilt in the background,
    # every chunk's keyword entry first, then the vectors. Killed once the rebuild has
    # committed a batch of vectors and before it has all of them.
    use = UniversalSentenceEncoderEmbedder()
    model_b = _generation(data, use)
    server, _ = serve_bunko(data, log, "use")
    deadline = time.monotonic() + 300
    while not 0 < _with_vectors(model_b) < chunks:
        assert server.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.05)
    os.kill(server.pid, signal.SIGKILL)
    server.wait(timeout=30)
    at_kill = _entries(model_b)
    full, partial = _documents_indexed(data, model_b)
    vectors_at_kill = sum(v is not None for _, v in at_kill)
    assert len(at_kill) == chunks and 0 < vectors_at_kill < chunks  # keywords all there
    assert _statuses(data) == {"completed": SWITCH_FILES}

    # Started again with B: the startup check sees the half-built generation and rebuilds it.
    server, port = serve_bunko(data, log, "use")
    try:
        deadline = time.monotonic() + 300
        while f"startup check: index rebuilt with {chunks} entries" not in log.read_text():
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        found = asyncio.run(mcp_search(f"http://127.0.0.1:{port}", QUERY))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    text = log.read_text()
    assert "Traceback" not in text
    assert "its last rebuild did not finish; rebuilding it from metadata" in text, text[-3000:]
    _check_consistent(data, files=SWITCH_FILES, embedder="use")

    # B's generation holds exactly metadata's chunks, each with B's vector of its text; A's
    # generation is as A left it.
    services = make_services(data, embedder="none")
    try:
        stored = {c.id: c.content for c in services.metadata.iter_chunks()}
    finally:
        services.close()
    rebuilt = _entries(model_b)
    assert [cid for cid, _ in rebuilt] == sorted(stored)
    vectors = np.stack([np.frombuffer(v, dtype="<f2") for _, v in rebuilt]).astype(np.float32)
    assert vectors.shape == (chunks, use.dimension)
    sample = [0, chunks // 2, chunks - 1]
    expected = use.embed_documents([stored[rebuilt[i][0]] for i in sample])
    assert np.allclose(np.sum(vectors[sample] * expected, axis=1), 1.0, atol=0.01)
    assert _entries(model_a_db) == model_a  # and marked stale: B's generation was written
    assert GenerationMarks(model_a_db.parent).stale() is not None

    # The search answered from B's vectors: the first topic found by meaning alone, with the
    # cosine of B's query and passage vectors.
    assert found["vector_search_used"] and found["items"], found
    top = found["items"][0]
    assert TOPICS[0] in top["content"] and top["text_score"] == 0
    # (`content` joins the document's matching chunks; the scores are those of chunk `id`.)
    cosine = float(use.embed_query(QUERY) @ use.embed_documents([stored[top["id"]]])[0])
    assert abs(top["vector_score"] - cosine) < 0.01, (top["vector_score"], cosine)
    print(
        f"\nmodel switch: killed with {vectors_at_kill} of {chunks} chunks' vectors in B's generation "
        f"({full} of {SWITCH_FILES} documents whole, {partial} in part); all rebuilt"
    )
