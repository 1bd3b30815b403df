"""The `bunko` command as a user runs it: real processes, a real data folder, a real socket."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.cli_harness import BUNKO, run
from tests.waiting import free_port

pytestmark = pytest.mark.slow  # real `bunko` processes, one serving


@pytest.fixture
def corpus(tmp_path) -> Path:
    folder = tmp_path / "corpus"
    (folder / "ja").mkdir(parents=True)
    (folder / "en.txt").write_text(
        "The lighthouse keeper logs every passing ship.", encoding="utf-8"
    )
    (folder / "ja" / "doc.md").write_text(
        "東京の図書館では全文検索エンジンを使っています。", encoding="utf-8"
    )
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 junk")
    return folder


def test_ingest_then_search_in_english_and_japanese(tmp_path, corpus):
    data = tmp_path / "data"
    proc = run(["ingest", str(corpus)], data, check=False)
    assert proc.returncode == 1  # one file failed, and the user is told which
    assert "broken.pdf" in proc.stderr and "2 indexed, 1 failed" in proc.stdout

    out = json.loads(run(["search", "lighthouse ships", "--json"], data).stdout)
    assert out["items"][0]["path"].endswith("en.txt")
    out = json.loads(run(["search", "検索", "--json"], data).stdout)
    assert out["items"][0]["path"].endswith("ja/doc.md")
    assert json.loads(run(["search", "", "--json"], data).stdout)["items"] == []
    assert "no results" in run(["search", "zyzzyva"], data).stdout


def test_metadata_at_ingest_and_a_filtered_search(tmp_path, corpus):
    data = tmp_path / "data"
    run(["ingest", str(corpus / "en.txt"), "--metadata", '{"team": "harbour", "year": 2024}'], data)
    run(["ingest", str(corpus / "ja")], data)
    legal = ["--filter", '{"equals": {"key": "team", "value": "harbour"}}']
    out = json.loads(run(["search", "lighthouse 検索", "--json", *legal], data).stdout)
    assert [i["path"][-6:] for i in out["items"]] == ["en.txt"]
    assert out["items"][0]["metadata"] == {"team": "harbour", "year": 2024}
    bad = run(["search", "x", "--filter", '{"near": {}}'], data, check=False)
    assert bad.returncode == 2 and "unknown operator" in bad.stderr
    bad = run(["ingest", str(corpus / "en.txt"), "--metadata", "[1]"], data, check=False)
    assert bad.returncode == 2 and "JSON object" in bad.stderr


def test_reindex_restores_search(tmp_path, corpus):
    data = tmp_path / "data"
    run(["ingest", str(corpus / "en.txt")], data)
    out = run(["reindex"], data)
    assert "1 chunks indexed" in out.stdout
    assert json.loads(run(["search", "keeper", "--json"], data).stdout)["items"]


def test_eval_prints_every_method_and_the_default(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    docs = {
        "d1": ("Cats", "Cats purr when they are content."),
        "d2": ("Dogs", "Dogs bark at the postman."),
        "d3": ("Tea", "Green tea contains caffeine and catechins."),
    }
    (beir / "corpus.jsonl").write_text(
        "\n".join(json.dumps({"_id": k, "title": t, "text": x}) for k, (t, x) in docs.items()),
        encoding="utf-8",
    )
    queries = {"q1": "why do cats purr", "q2": "does green tea have caffeine"}
    (beir / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": k, "text": v}) for k, v in queries.items()), encoding="utf-8"
    )
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n", encoding="utf-8"
    )
    report = json.loads(
        run(["eval", str(beir), "--json", "--embedder", "lsa"], tmp_path / "unused").stdout
    )
    for method in ("keyword", "vector", "rrf", "max", "default"):
        assert set(report[method]) >= {"ndcg@10", "recall@100", "mrr@10"}
    assert report["keyword"]["ndcg@10"] == pytest.approx(1.0)
    assert report["meta"]["documents"] == 3 and report["meta"]["queries"] == 2
    table = run(["eval", str(beir), "--embedder", "none"], tmp_path / "unused").stdout
    assert "nDCG@10" in table and "keyword" in table


def test_serve_answers_health_and_indexes_dropped_files(tmp_path):
    data, port = tmp_path / "data", free_port()
    # Auth off: /health gives its counts only to a caller it knows (everyone, with auth off).
    env = {**os.environ, "BUNKO_DATA_DIR": str(data), "BUNKO_EMBEDDER": "none", "BUNKO_AUTH": "off"}
    server = subprocess.Popen(
        [*BUNKO, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}/health"
        deadline = time.monotonic() + 60
        while True:
            try:
                health = httpx.get(url, timeout=2).json()
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stdout.read().decode()
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        assert health["status"] == "ok" and health["documents"] == 0
        (data / "drop" / "hello.txt").write_text("hello from the drop folder", encoding="utf-8")
        while httpx.get(url, timeout=2).json()["documents"] == 0:
            assert time.monotonic() < deadline + 30, "dropped file was not picked up"
            time.sleep(0.2)
        # A stop (SIGTERM, as systemd and docker send it) shuts down cleanly: exit 0, and the
        # index saved its snapshot on the way out, so the next start replays nothing.
        server.terminate()
        assert server.wait(timeout=30) == 0
        (manifest,) = (data / "index").glob("*/workspaces/*/manifest.json")
        index_db = sqlite3.connect(manifest.parents[2] / "index.db")
        (seq,) = index_db.execute("SELECT MAX(vector_seq) FROM workspaces").fetchone()
        index_db.close()
        assert json.loads(manifest.read_text())["seq"] == seq
    finally:
        if server.poll() is None:
            server.terminate()
        server.wait(timeout=30)
