"""Throughput, query latency and memory of the local embedders.

    .venv/bin/python tests/bench/bench_embedders.py [--eval-dir DIR] [--kinds use,lsa,e5]

Passages come from the BEIR sets (SciFact in English, JSQuAD in Japanese), half from each;
the eval folder is --eval-dir, else $BUNKO_EVAL_DIR, else ../shared/eval beside the repo.
Each embedder runs in its own child process so that its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SETS = ("scifact", "jsquad-valid")


def eval_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get("BUNKO_EVAL_DIR") or REPO.parent / "shared" / "eval")


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def spread(items: list, n: int) -> list:
    """n items taken evenly across the list (deterministic, not just the head)."""
    step = max(1, len(items) // n)
    return items[::step][:n]


def load_texts(root: Path, passages: int, queries: int) -> tuple[list[str], list[str], list[str]]:
    """(sampled passages, every passage for fitting LSA, sampled queries)."""
    sample, corpus, asked = [], [], []
    for name in SETS:
        texts = [d["text"] for d in read_jsonl(root / name / "corpus.jsonl")]
        corpus += texts
        sample += spread(texts, passages // len(SETS))
        asked += spread([q["text"] for q in read_jsonl(root / name / "queries.jsonl")], queries)
    return sample, corpus, asked


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(kind: str, args: argparse.Namespace) -> dict:
    """Run in a child process: one embedder, fresh memory."""
    from bunko.adapters.local.embedders import build_embedder

    sample, corpus, queries = load_texts(eval_dir(args.eval_dir), args.passages, args.queries)
    result: dict = {"kind": kind, "rss_before_mb": round(peak_rss_mb())}
    embedder = build_embedder(
        kind,
        state_dir=None,
        batch_size=args.batch_size,
        lsa_dimension=args.lsa_dimension,
        threads=args.threads,
    )
    assert embedder is not None
    t = time.perf_counter()
    if kind == "lsa":
        embedder.fit(corpus)
        result["fit_docs"] = len(corpus)
    embedder.embed_query("warm up")  # loads the model
    result["load_s"] = round(time.perf_counter() - t, 2)

    t = time.perf_counter()
    vectors = embedder.embed_documents(sample)
    elapsed = time.perf_counter() - t
    assert vectors.shape == (len(sample), embedder.dimension)
    result |= {
        "name": embedder.name,
        "dimension": embedder.dimension,
        "passages": len(sample),
        "mean_chars": round(sum(map(len, sample)) / len(sample)),
        "texts_per_s": round(len(sample) / elapsed, 1),
        "chars_per_s": round(sum(map(len, sample)) / elapsed),
    }
    latencies = []
    for query in queries:
        t = time.perf_counter()
        embedder.embed_query(query)
        latencies.append((time.perf_counter() - t) * 1000)
    result["query_ms_p50"] = round(statistics.median(latencies), 1)
    result["query_ms_p95"] = round(statistics.quantiles(latencies, n=20)[-1], 1)
    result["peak_rss_mb"] = round(peak_rss_mb())
    return result


COLUMNS = (
    ("kind", "kind"),
    ("dim", "dimension"),
    ("load s", "load_s"),
    ("texts/s", "texts_per_s"),
    ("chars/s", "chars_per_s"),
    ("query p50 ms", "query_ms_p50"),
    ("query p95 ms", "query_ms_p95"),
    ("RSS before MB", "rss_before_mb"),
    ("peak RSS MB", "peak_rss_mb"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-dir", help="folder holding scifact/ and jsquad-valid/")
    parser.add_argument("--kinds", default="use,lsa,e5")
    parser.add_argument("--passages", type=int, default=500)
    parser.add_argument("--queries", type=int, default=50, help="per set")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lsa-dimension", type=int, default=256)
    parser.add_argument("--threads", type=int, help="USE parts run at once (default: one per CPU)")
    parser.add_argument("--json", action="store_true", help="print JSON lines only")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args)))
        return

    root = eval_dir(args.eval_dir)
    if not all((root / name / "corpus.jsonl").exists() for name in SETS):
        sys.exit(f"no eval data in {root}: pass --eval-dir or set BUNKO_EVAL_DIR")
    load_before = os.getloadavg()[0]  # other processes' load skews every number here
    forwarded = [a for a in sys.argv[1:] if a != "--json"]
    rows = []
    for kind in args.kinds.split(","):
        child = [sys.executable, __file__, *forwarded, "--eval-dir", str(root), "--child", kind]
        line = subprocess.run(child, check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(line.strip().splitlines()[-1]))
        if args.json:
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        return
    first = rows[0]
    print(
        f"{first['passages']} passages (mean {first['mean_chars']} chars), "
        f"{args.queries} queries per set, batch size {args.batch_size}, {os.cpu_count()} CPUs, "
        f"load average before {load_before:.1f}"
    )
    print(" | ".join(title for title, _ in COLUMNS))
    for row in rows:
        print(" | ".join(str(row.get(key, "")) for _, key in COLUMNS))
    for row in rows:
        if "fit_docs" in row:
            print(f"{row['kind']}: load s includes fitting on {row['fit_docs']} passages")


if __name__ == "__main__":
    main()
