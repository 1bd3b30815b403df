"""A library's move at the REST door: export, download, upload and import times, and the
peak of Python's allocations while the server exports and sends the archive, for N documents.

    .venv/bin/python -m tests.bench.bench_move_doors [--docs 1000] [--embedder none]

Builds a shared library of N passages (SciFact and JSQuAD, as tests/bench/bench_move.py) on
a live REST server in this process (keyword search only by default: embedding is measured by
bench_move), then over HTTP as its owner: POST /libraries/{id}/export, polled to its end, the
archive downloaded by its link into a file (streamed), tracemalloc's peak over both against
the originals' total; then another person's POST /libraries/import of that file, polled
until every document is indexed (paced by people's upload rate: 600 at once, then 120 a
minute, unless --burst is given).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import tracemalloc
from pathlib import Path

import httpx

from bunko.services.ingest import Upload
from tests.bench.bench_ingest import passages
from tests.e2e.rest_harness import serve

REPO = Path(__file__).resolve().parents[2]


def ended(client: httpx.Client, path: str) -> dict:
    while (job := client.get(path).json())["status"] == "running":
        time.sleep(0.2)
    return job


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--embedder", default="none")
    parser.add_argument("--burst", type=int, default=None, help="BUNKO_UPLOAD_BURST")
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=Path(os.environ.get("BUNKO_EVAL_DIR", REPO.parent / "shared" / "eval")),
    )
    args = parser.parse_args()
    texts = passages(args.eval_dir, args.docs)
    with tempfile.TemporaryDirectory() as tmp, serve(
        Path(tmp) / "data", embedder=args.embedder, refine_embedder="none",
        max_file_bytes=200 * 1024 * 1024,
        **({"upload_burst": args.burst} if args.burst else {}),
    ) as rest:  # fmt: skip
        owner, importer = rest.new_user(), rest.new_user()
        library = owner.client.post("/libraries", json={"name": "Bench"}).json()["id"]
        for n, text in enumerate(texts):  # the operator's files: not paced by people's rate
            rest.services.ingest.submit(
                Upload(library, text.encode(), path=f"passages/{n:05d}.md",
                       category="scifact" if n < len(texts) // 2 else "jsquad",
                       metadata={"n": float(n)}, source="cli")
            )  # fmt: skip
        rest.services.ingest.wait_for_queue(timeout=3600)
        originals = sum(len(t.encode()) for t in texts)
        archive = Path(tmp) / "bench.zip"

        tracemalloc.start()
        started = time.perf_counter()
        job = owner.client.post(f"/libraries/{library}/export", json={}).json()
        job = ended(owner.client, f"/libraries/{library}/export/{job['id']}")
        exported = time.perf_counter() - started
        link = rest.url + job["download"]
        with httpx.stream("GET", link, timeout=600) as response, archive.open("wb") as out:
            for block in response.iter_bytes():
                out.write(block)
        downloaded = time.perf_counter() - started - exported
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

        started = time.perf_counter()
        with archive.open("rb") as data:
            moved = importer.client.post(
                "/libraries/import",
                files={"file": ("bench.zip", data, "application/zip")},
                data={"name": "Bench copy"},
            ).json()
        uploaded = time.perf_counter() - started
        moved = ended(importer.client, f"/libraries/import/{moved['id']}")
        imported = time.perf_counter() - started
        result = moved["result"]
        print(f"library: {len(texts)} documents, originals {originals:,} bytes "
              f"(embedder {args.embedder})")  # fmt: skip
        print(f"export over REST until done: {exported:.2f} s; download {downloaded:.2f} s; "
              f"archive {archive.stat().st_size:,} bytes; peak Python allocation in this "
              f"process (server included) during both: {peak:,} bytes")  # fmt: skip
        print(f"import over REST: upload and check {uploaded:.2f} s, until indexed "
              f"{imported:.1f} s: {result['added']} added, {result['indexed']} indexed, "
              f"{len(result['failed'])} failed")  # fmt: skip


if __name__ == "__main__":
    main()
