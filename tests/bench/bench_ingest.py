"""End-to-end ingest throughput beside the embedder's raw speed, on the same passages.

    .venv/bin/python tests/bench/bench_ingest.py [--docs 400] [--embedder use] [--eval-dir DIR]

Ingest runs the real pipeline (blob write, parse, chunk, embed in batches, FTS + vector index,
metadata) into a throw-away data folder; "raw" embeds the resulting chunk texts alone. The
target is ingest ≥ 0.8× raw (chunks per second).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID

REPO = Path(__file__).resolve().parents[2]


def passages(eval_dir: Path, n: int) -> list[str]:
    texts = []
    for name in ("scifact", "jsquad-valid"):
        with (eval_dir / name / "corpus.jsonl").open(encoding="utf-8") as f:
            for line, _ in zip(f, range(n // 2), strict=False):
                row = json.loads(line)
                texts.append(f"{row.get('title', '')}\n\n{row['text']}")
    return texts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=400)
    parser.add_argument("--embedder", default="use")
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=Path(os.environ.get("BUNKO_EVAL_DIR", REPO.parent / "shared" / "eval")),
    )
    args = parser.parse_args()
    texts = passages(args.eval_dir, args.docs)
    with scratch_services(embedder=args.embedder) as (services, queue):
        services.embedder.embed_documents(["warm up"])  # model load is not throughput
        started = time.perf_counter()
        for i, text in enumerate(texts):
            services.ingest.submit_text(DEFAULT_WORKSPACE_ID, path=f"doc-{i}.txt", content=text)
        jobs = queue.take()
        for i in range(0, len(jobs), 256):
            services.pipeline.process(jobs[i : i + 256])
        ingest_s = time.perf_counter() - started
        chunks = [c.content for c in services.metadata.iter_chunks()]
        started = time.perf_counter()
        for i in range(0, len(chunks), services.settings.embed_batch_size):
            services.embedder.embed_documents(chunks[i : i + services.settings.embed_batch_size])
        raw_s = time.perf_counter() - started
    ingest_rate, raw_rate = len(chunks) / ingest_s, len(chunks) / raw_s
    print(f"embedder {args.embedder}: {len(texts)} docs, {len(chunks)} chunks")
    print(f"end-to-end ingest: {ingest_rate:8.1f} chunks/s ({len(texts) / ingest_s:.1f} docs/s)")
    print(f"embedder raw:      {raw_rate:8.1f} chunks/s")
    print(f"ratio ingest/raw:  {ingest_rate / raw_rate:8.2f}  (target ≥ 0.80)")


if __name__ == "__main__":
    main()
