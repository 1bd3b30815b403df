"""Speed, recall and memory of the local search index (LocalSearchIndex) at N chunks.

    .venv/bin/python tests/bench/bench_index.py --sizes 10000,100000 [--eval-dir DIR]
    .venv/bin/python tests/bench/bench_index.py --sizes 100000 --compare-engines

Texts are SciFact abstracts (the eval folder is --eval-dir, else $BUNKO_EVAL_DIR, else
../shared/eval beside the repo) cut into chunks of 2-5 sentences; to reach N chunks the
corpus is cut again with other window sizes and offsets, as overlapping chunkings would.
Vectors are given, not embedded, so the engine is measured and not a model: a two-level
mixture of Gaussians on the unit sphere (topic → source abstract → chunk), so a chunk's
nearest neighbours are its siblings and topic and ANN recall means something. Queries are
SciFact claims, each paired with a vector near one abstract.

Each size runs in its own child process. Memory: "data MiB" is the process's RSS once the
data set is built (N x 512 float32 vectors, texts, exact answers: the benchmark's, not the
index's); the peak-RSS count is then reset (VmHWM), so "peak MiB" is the process peak from
indexing on and "index MiB" its growth over the data. Latency is per call, single-threaded, as wall time and as this thread's CPU time
(on a shared machine wall time includes waiting for a core; CPU time does not), with
`limit` = 100 (the search service's candidate count) unless --limit says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
DIM = 512
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def eval_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get("BUNKO_EVAL_DIR") or REPO.parent / "shared" / "eval")


# --- data ---


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def chunk_texts(corpus: Path, n: int) -> tuple[list[str], np.ndarray]:
    """N chunk texts and, for each, the index of the abstract it was cut from."""
    docs = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    sentences = [_SENTENCE_END.split(f"{d['title']}. {d['text']}".strip()) for d in docs]
    texts: list[str] = []
    sources: list[int] = []
    replica = 0
    while len(texts) < n:
        window = 2 + replica % 4
        offset = replica % window
        for source, sents in enumerate(sentences):
            for start in range(-offset, len(sents), window):
                text = " ".join(sents[max(start, 0) : start + window]).strip()
                if text:
                    texts.append(text)
                    sources.append(source)
        replica += 1
    return texts[:n], np.asarray(sources[:n], dtype=np.int64)


def clustered_vectors(sources: np.ndarray, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(chunk vectors, abstract vectors): cos(chunk, its abstract) ≈ 0.86, cos(abstract,
    its topic) ≈ 0.71, ≈ 0 across topics; about 1,000 chunks per topic."""
    rng = np.random.default_rng(seed)
    topics = max(10, len(sources) // 1000)
    n_sources = int(sources.max()) + 1
    noise = 1.0 / np.sqrt(DIM)
    centres = _unit(rng.standard_normal((topics, DIM), dtype=np.float32))
    abstracts = _unit(
        centres[rng.integers(0, topics, n_sources)]
        + noise * rng.standard_normal((n_sources, DIM), dtype=np.float32)
    )
    vectors = np.empty((len(sources), DIM), dtype=np.float32)
    for start in range(0, len(sources), 8192):  # in batches: no second N x DIM temporary
        part = sources[start : start + 8192]
        jitter = 0.6 * noise * rng.standard_normal((len(part), DIM), dtype=np.float32)
        vectors[start : start + len(part)] = _unit(abstracts[part] + jitter)
    return vectors, abstracts


def queries(scifact: Path, abstracts: np.ndarray, count: int, seed: int):
    lines = (scifact / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines][:count]
    rng = np.random.default_rng(seed + 1)
    near = abstracts[rng.integers(0, len(abstracts), len(texts))]
    noise = 0.8 / np.sqrt(DIM)
    return texts, _unit(near + noise * rng.standard_normal(near.shape, dtype=np.float32))


def exact_top(vectors: np.ndarray, query_vectors: np.ndarray, k: int) -> np.ndarray:
    """Exact top-k rows per query (in blocks of queries: no queries x N temporaries)."""
    out = []
    for start in range(0, len(query_vectors), 16):
        sims = query_vectors[start : start + 16] @ vectors.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, 1), 1)
        out.append(np.take_along_axis(top, order, 1))
    return np.concatenate(out)


# --- measuring ---


def _status(field: str) -> float:
    """A /proc/self/status memory field in MiB (Linux)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def rss_mib() -> float:
    return _status("VmRSS")


def reset_peak_rss() -> None:
    """Restart the peak-RSS count (VmHWM) here, so the peak measured is the index's and
    not the data generation's (Linux ≥ 4.0: writing 5 to clear_refs)."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
        refs.write("5")


def peak_rss_mib() -> float:
    return _status("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def interleaved(calls: dict, pairs: list) -> tuple[dict, dict, dict]:
    """Per call name: wall ms, this thread's CPU ms, and results. The calls take turns on
    each query, so a busy neighbour on a shared machine slows them all alike."""
    wall: dict = {name: [] for name in calls}
    cpu: dict = {name: [] for name in calls}
    out: dict = {name: [] for name in calls}
    for text, vector in pairs:
        for name, call in calls.items():
            start, start_cpu = time.perf_counter(), time.thread_time()
            out[name].append(call(text, vector))
            wall[name].append((time.perf_counter() - start) * 1000)
            cpu[name].append((time.thread_time() - start_cpu) * 1000)
    return wall, cpu, out


def timed(fn, items) -> tuple[list[float], list]:
    times, results = [], []
    for item in items:
        start = time.perf_counter()
        results.append(fn(item))
        times.append((time.perf_counter() - start) * 1000)
    return times, results


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def run_size(n: int, args: argparse.Namespace) -> dict:
    from bunko.adapters.local.search_index import LocalSearchIndex
    from bunko.ports import IndexEntry, SearchFilter

    scifact = eval_dir(args.eval_dir) / "scifact"
    texts, sources = chunk_texts(scifact / "corpus.jsonl", n)
    vectors, abstracts = clustered_vectors(sources, seed=args.seed)
    query_texts, query_vectors = queries(scifact, abstracts, args.queries, args.seed)
    categories = [f"cat{s % 10}" for s in sources]  # ~10% of chunks per category
    truth10 = exact_top(vectors, query_vectors, 10)
    truth_limit = exact_top(vectors, query_vectors, args.limit)
    # Kept as float16 from here (the index stores float16 too): half the benchmark's own
    # memory. The exact answers above came from the float32 originals.
    vectors = vectors.astype(np.float16)
    ws = "bench"
    row: dict = {"chunks": n}
    with tempfile.TemporaryDirectory() as tmp:
        reset_peak_rss()
        rss_before = rss_mib()
        row["data_rss_mib"] = rss_before
        index = LocalSearchIndex(Path(tmp) / "index", dimension=DIM)
        wall, cpu = time.perf_counter(), cpu_seconds()
        for start in range(0, n, args.batch):
            index.index(
                [
                    IndexEntry(
                        chunk_id=f"c{i}",
                        document_id=f"d{sources[i]}",
                        workspace_id=ws,
                        revision=1,
                        text=texts[i],
                        category=categories[i],
                        vector=vectors[i],
                    )
                    for i in range(start, min(n, start + args.batch))
                ]
            )
        row["index_s"] = time.perf_counter() - wall
        row["index_cpu_s"] = cpu_seconds() - cpu
        every = SearchFilter(workspace_id=ws)
        one_category = SearchFilter(workspace_id=ws, category="cat3")
        limit = args.limit
        calls = {
            "hybrid": lambda t, v: index.hybrid_search(t, v, every, limit),
            "keyword": lambda t, v: index.keyword_search(t, every, limit),
            "vector": lambda t, v: index.vector_search(v, every, limit),
            "vector10": lambda t, v: index.vector_search(v, every, 10),
            "filtered": lambda t, v: index.hybrid_search(t, v, one_category, limit),
        }
        pairs = list(zip(query_texts, query_vectors, strict=True))
        for text, vector in pairs[:20]:  # warm-up
            calls["hybrid"](text, vector)
        wall, cpu, out = interleaved(calls, pairs)
        row |= {
            "hybrid_p50": pct(wall["hybrid"], 50),
            "hybrid_p95": pct(wall["hybrid"], 95),
            "hybrid_cpu_p50": pct(cpu["hybrid"], 50),
            "hybrid_cpu_p95": pct(cpu["hybrid"], 95),
            "filtered_cpu_p50": pct(cpu["filtered"], 50),
            "keyword_p50": pct(wall["keyword"], 50),
            "vector_p50": pct(wall["vector"], 50),
            "filtered_hybrid_p50": pct(wall["filtered"], 50),
            "filtered_full": float(np.mean([len(h[1]) == limit for h in out["filtered"]])),
            "recall10": recall(out["vector10"], truth10),
            f"recall{limit}": recall(out["vector"], truth_limit),
            "peak_rss_mib": peak_rss_mib(),
            "rss_growth_mib": peak_rss_mib() - rss_before,
        }
        index.close()
        wall = time.perf_counter()
        reopened = LocalSearchIndex(Path(tmp) / "index", dimension=DIM)
        reopened.hybrid_search(query_texts[0], query_vectors[0], every, limit)
        row["reopen_s"] = time.perf_counter() - wall
        reopened.close()
    return row


def recall(hits: list, truth: np.ndarray) -> float:
    k = truth.shape[1]
    found = [{int(h.chunk_id[1:]) for h in got[:k]} for got in hits]
    return float(np.mean([len(f & set(t.tolist())) / k for f, t in zip(found, truth, strict=True)]))


COLUMNS = [
    ("chunks", "chunks", "{:,}"),
    ("index_s", "index s", "{:.1f}"),
    ("index_cpu_s", "index cpu s", "{:.1f}"),
    ("hybrid_p50", "hybrid p50 ms", "{:.2f}"),
    ("hybrid_p95", "hybrid p95 ms", "{:.2f}"),
    ("hybrid_cpu_p50", "hybrid CPU p50 ms", "{:.2f}"),
    ("hybrid_cpu_p95", "hybrid CPU p95 ms", "{:.2f}"),
    ("keyword_p50", "keyword p50 ms", "{:.2f}"),
    ("vector_p50", "vector p50 ms", "{:.2f}"),
    ("filtered_hybrid_p50", "filtered hybrid p50 ms", "{:.2f}"),
    ("filtered_cpu_p50", "filtered CPU p50 ms", "{:.2f}"),
    ("recall10", "recall@10", "{:.3f}"),
    ("data_rss_mib", "data MiB", "{:.0f}"),
    ("peak_rss_mib", "peak MiB", "{:.0f}"),
    ("rss_growth_mib", "index MiB", "{:.0f}"),
    ("reopen_s", "reopen+1st query s", "{:.1f}"),
]


def print_table(rows: list[dict], limit: int) -> None:
    heads = [h for _, h, _ in COLUMNS] + [f"recall@{limit}", "filtered full"]
    print("| " + " | ".join(heads) + " |")
    print("|" + "---|" * len(heads))
    for row in rows:
        cells = [fmt.format(row[key]) for key, _, fmt in COLUMNS]
        cells += [f"{row[f'recall{limit}']:.3f}", f"{row['filtered_full']:.2f}"]
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--eval-dir")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1000, help="entries per index() call")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--compare-engines",
        action="store_true",
        help="also time the engines that were not chosen (see bench_engines)",
    )
    parser.add_argument("--one-size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_size:
        result = run_size(args.one_size, args)
        if args.compare_engines:
            from tests.bench.bench_engines import compare

            result["engines"] = compare(args.one_size, args)
        print(json.dumps(result))
        return
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        child = [
            sys.executable,
            "-m",
            "tests.bench.bench_index",
            "--one-size",
            str(size),
            "--queries",
            str(args.queries),
            "--limit",
            str(args.limit),
            "--batch",
            str(args.batch),
            "--seed",
            str(args.seed),
        ]
        child += ["--eval-dir", str(eval_dir(args.eval_dir))]
        child += ["--compare-engines"] if args.compare_engines else []
        out = subprocess.run(child, cwd=REPO, check=True, stdout=subprocess.PIPE, text=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"{size:,} chunks done", file=sys.stderr, flush=True)
    print_table(rows, args.limit)
    for row in rows:
        for name, numbers in row.get("engines", {}).items():
            print(f"{row['chunks']:,} {name}: {numbers}")


if __name__ == "__main__":
    main()
