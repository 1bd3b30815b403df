"""End-to-end ingest throughput beside the embedder's raw speed, on the same passages.

    .venv/bin/python tests/bench/bench_ingest.py [--docs 400] [--rounds 3] [--embedder use]

Ingest runs the real pipeline (blob write, parse, chunk, embed in batches, FTS + vector index,
metadata) into a throw-away data folder; "raw" embeds the resulting chunk texts alone. Rounds
alternate the two, and the ratio is the median of the rounds' ratios. Target (issue 12):
ingest ≥ 0.95× raw (chunks per second); the pipeline embeds one group in a thread while it
parses, chunks and writes the others.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=Path(os.environ.get("BUNKO_EVAL_DIR", REPO.parent / "shared" / "eval")),
    )
    args = parser.parse_args()
    texts = passages(args.eval_dir, args.docs)
    ratios, ingest_rates, raw_rates = [], [], []
    for _ in range(args.rounds):  # alternating rounds, so a noisy neighbour hits both sides
        ingest_rate, raw_rate, chunks = one_round(texts, args.embedder)
        ratios.append(ingest_rate / raw_rate)
        ingest_rates.append(ingest_rate)
        raw_rates.append(raw_rate)
    print(f"embedder {args.embedder}: {len(texts)} docs, {chunks} chunks, {args.rounds} rounds")
    print(f"end-to-end ingest: {statistics.median(ingest_rates):8.1f} chunks/s (median)")
    print(f"embedder raw:      {statistics.median(raw_rates):8.1f} chunks/s (median)")
    print(
        f"ratio ingest/raw:  {statistics.median(ratios):8.2f} median of "
        f"{', '.join(f'{r:.2f}' for r in ratios)}  (target ≥ 0.95)"
    )


def one_round(texts: list[str], embedder: str) -> tuple[float, float, int]:
    """Ingest the texts into a fresh graph, then embed its chunk texts alone; chunks/s each."""
    with scratch_services(embedder=embedder) as (services, queue):
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
    return len(chunks) / ingest_s, len(chunks) / raw_s, len(chunks)


if __name__ == "__main__":
    main()
