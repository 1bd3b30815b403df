"""Restart of a real `bunko serve` over N chunks: process start → first `search_text` answer.

    .venv/bin/python -m tests.bench.bench_serve --chunks 100000 [--runs 3]

1. Builds, once (kept in --data-dir and reused), a knowledge base of N chunks in the
   default workspace: bench_data's SciFact chunk texts with near-duplicate USE vectors, in
   documents of 10-50 chunks, written through the metadata store and the search index
   directly (embedding 100k chunks would take most of an hour and measure the model, not
   the restart), then closed (the index saves its snapshot).
2. Starts `bunko serve` (auth on, an API key made beforehand, no folder watch) and calls
   MCP `search_text` over streamable HTTP until it answers; prints the seconds from the
   process start to the MCP port accepting connections and to the first answer (which
   includes loading the embedding model for the query), the hits it returned, and a second
   query's time, and the index's own log line (how long opening the workspace took).
   Each run is a fresh process.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import numpy as np

REPO = Path(__file__).resolve().parents[2]


def build(data_dir: Path, n: int, eval_dir: Path, cache: Path) -> str:
    """The knowledge base (if missing) and an API key for it."""
    from bunko.bootstrap import build_services
    from bunko.config import Settings
    from bunko.domain import DEFAULT_WORKSPACE_ID, Chunk, Document, DocumentStatus
    from bunko.ports import IndexEntry
    from tests.bench.bench_data import chunk_texts, documents, neardup_vectors

    services = build_services(Settings(data_dir=data_dir, embedder="use"))
    try:
        ws = DEFAULT_WORKSPACE_ID
        if services.metadata.count_chunks(ws) < n:
            scifact = eval_dir / "scifact"
            texts, sources = chunk_texts(scifact / "corpus.jsonl", n)
            vectors, _ = neardup_vectors(scifact, cache, sources, seed=7)
            bounds, categories = documents(n, 7)
            started = time.perf_counter()
            for k, (start, end) in enumerate(bounds):
                if services.metadata.get_document(ws, f"bench-{k}") is not None:
                    continue  # written by an earlier, interrupted build
                doc = Document(
                    id=f"bench-{k}",
                    workspace_id=ws,
                    path=f"bench/{k}.txt",
                    name=f"{k}.txt",
                    mime="text/plain",
                    category=categories[k],
                    status=DocumentStatus.COMPLETED,
                    chunk_count=end - start,
                )
                services.metadata.add_document(doc)
                chunks = [
                    Chunk(f"c{i}", doc.id, ws, 1, i - start, texts[i]) for i in range(start, end)
                ]
                services.metadata.replace_chunks(ws, doc.id, chunks)
                services.index.index(
                    [
                        IndexEntry(c.id, doc.id, ws, 1, c.content, doc.category, vectors[i])
                        for i, c in zip(range(start, end), chunks, strict=True)
                    ]
                )
            print(f"built {n} chunks in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        _, key = services.apikeys.create(workspace_id=ws, scopes="kb:read")
    finally:
        services.close()
    return key


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def first_answer(url: str, key: str, query: str) -> tuple[int, float]:
    from tests.e2e.mcp_harness import http_client, ok

    async with http_client(url, key) as client:
        # min_score 0: the bench data's vectors are not its texts' own, so the calibrated
        # similarity of its hits says little; every hit proves the index answered.
        arguments = {"content": query, "min_score": 0}
        hits = ok(await client.call_tool("search_text", arguments))["items"]
        started = time.perf_counter()
        ok(await client.call_tool("search_text", {**arguments, "content": query + " again"}))
        return len(hits), time.perf_counter() - started


def run(data_dir: Path, key: str, query: str) -> dict:
    with tempfile.TemporaryFile(mode="w+") as log:
        return run_logged(data_dir, key, query, log)


def run_logged(data_dir: Path, key: str, query: str, log) -> dict:
    port, mcp_port = free_port(), free_port()
    command = [sys.executable, "-m", "bunko.cli", "serve", "--data-dir", str(data_dir)]
    command += ["--port", str(port), "--mcp-port", str(mcp_port), "--no-watch"]
    started = time.perf_counter()
    server = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=log, env=os.environ)
    try:
        listening = None
        while True:
            if server.poll() is not None:
                raise SystemExit("bunko serve exited")
            if listening is None:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", mcp_port)) == 0:
                        listening = time.perf_counter() - started
            if listening is not None:
                try:
                    hits, second = anyio.run(
                        first_answer, f"http://127.0.0.1:{mcp_port}", key, query
                    )
                    break
                except Exception:  # the app may still be starting behind the socket
                    pass
            time.sleep(0.05)
        answered = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=60)
    log.seek(0)
    opened = [line.split("bunko.adapters.local.engine.search_index: ")[-1].strip() for line in log
              if "index of workspace" in line]  # fmt: skip
    return {
        "listening_s": round(listening, 2),
        "first_answer_s": round(answered - second, 2),
        "hits": hits,
        "second_query_ms": round(second * 1000, 1),
        "index_log": opened,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "bunko-bench-serve"
    )
    parser.add_argument("--cache-dir", default="~/.cache/bunko-bench", help="USE vectors")
    parser.add_argument("--eval-dir", default=os.environ.get("BUNKO_EVAL_DIR"))
    args = parser.parse_args()
    eval_dir = Path(args.eval_dir or REPO.parent / "shared" / "eval")
    data_dir = args.data_dir / str(args.chunks)
    key = build(data_dir, args.chunks, eval_dir, Path(args.cache_dir).expanduser())
    query = json.loads((eval_dir / "scifact" / "queries.jsonl").open().readline())["text"]
    rows = [run(data_dir, key, query) for _ in range(args.runs)]
    for row in rows:
        print(json.dumps(row))
    first = np.median([r["first_answer_s"] for r in rows])
    print(f"bunko serve over {args.chunks:,} chunks: start → first search_text answer "
          f"{first:.2f} s (median of {len(rows)})")  # fmt: skip


if __name__ == "__main__":
    main()
