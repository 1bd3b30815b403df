"""Speed, recall, memory and restart of the local search index (LocalSearchIndex) at N
chunks, written as users write them: one call per document of 10-50 chunks.

    .venv/bin/python -m tests.bench.bench_index --sizes 100000 --datasets clustered,neardup
    .venv/bin/python -m tests.bench.bench_index --sizes 1000000 --datasets clustered --queries 200

Data (bench_data): SciFact chunk texts (the eval folder is --eval-dir, else
$BUNKO_EVAL_DIR, else ../shared/eval beside the repo) with clustered synthetic vectors or
near-duplicate USE vectors, in documents whose category selects 1%, 10% or 50% of chunks.

Each (size, data set) runs in its own child process, in phases:
1. ingest: one `index()` call per document, then `flush()` (the snapshot); "ingest s" is
   both, wall time. Meanwhile another thread makes a hybrid search every 0.1 s, as a user
   would during a bulk load: "search while ingesting" (it costs the ingest ~2% of a core).
2. search: hybrid (both legs at `limit` = 100, the search service's candidate count),
   keyword, vector, and hybrid filtered to the 1%, 10% and 50% categories, taking turns per
   query; recall@10 of `vector_search(limit=10)` against the exact top 10, and of the
   filtered 10% search against the exact filtered top 10.
3. churn: 2% of the documents deleted and 2% re-indexed with new vectors, one call each,
   a hybrid search after every call: per-call and search p50 under churn.
4. reopen: the index closed, then opened in a fresh process: constructor → first hybrid
   answer ("reopen s"), and that process's RSS.
5. crash: a fresh process writes 15k more chunks (under the snapshot threshold) and is
   killed with SIGKILL; another opens the index: constructor → first answer ("crash
   reopen s"), and checks that every committed chunk is there.

Memory: "data MiB" is the RSS once the data set is built (the benchmark's, not the
index's); the peak-RSS count (VmHWM) is then reset, so "peak MiB" is the peak from
indexing on and "index MiB" its growth over the data. Latency is wall time per call,
single-threaded, on a shared 2-core machine (CPU time is printed too).

Trade-offs, chosen by measurement (numbers in the closing note of the issue):
- Keyword postings live in immutable CSR segments (term id → slots, tfs) merged as a binary
  counter, saved as .npy and opened by memory map: a restart parses a vocabulary and maps
  arrays, instead of re-analysing every chunk (10 s at 100k before). Queries gather from
  O(log N) segments plus a small unsorted buffer; df is counted from the live postings a
  query reads anyway, so deletes need no statistics and N / avg length are kept per write.
- Vectors are float16 rows in one append-only memory-mapped file (row = slot) and an int8
  HNSW graph opened as a read-only view; the first write after a restart loads the graph
  (~0.1 s per 100k). New rows wait in a pending tail ranked exactly and enter the graph
  1,024 at a time with both cores, in a background thread: per-document writes cost no
  graph call, and the writer analyses and stores the next documents meanwhile (100k
  clustered, alternating runs: 30.8 / 28.0 s → 26.1 / 22.0 s; the graph's thread is then
  the critical path: ~19 s of the 21 s are its inserts and duplicate lookups). Inserting
  on one core instead of both, to leave the other to the writer, was slower (35.5 / 32.5 s).
- A search during a bulk load used to wait for the whole background insert (1,024+ rows,
  ~150 ms, under the graph's lock) and, when the writer was waiting for the graph, for the
  writer too (it waited holding the index's lock): "search while ingesting" p50 / p95 was
  101-111 / 201-211 ms at 100k clustered. Now the insert takes the lock 128 rows at a time
  and lets a waiting search in between, and the writer waits for the graph before taking
  the index's lock: 18-19 / 48-57 ms (two alternating runs each; ingest 26.4-27.3 s
  against 26.5-29.0, ingest CPU +2-5 s for the smaller graph calls).
- A hybrid search runs its vector leg in a second thread while the keyword leg ranks (the
  graph and numpy release the GIL for part of their work): hybrid p50 ~0.8x the sum of
  the legs, for ~12% more CPU. usearch searches from two threads at once slowed each other
  (2.4x the time of one after the other), so one thread runs every vector leg.
- At ~1 ms a leg, Python-level costs count: rows read through np.memmap (which wraps every
  slice and gather it returns), usearch's answer turned into pairs by a loop over numpy
  scalars and hits built as frozen dataclasses cost 0.15-0.2 ms each with warm caches, but
  together only ~0.07 ms of the clustered vector leg when each query follows another search
  (1.53 → 1.46 ms): there the leg is the graph walk's and the row gathers' memory latency.
  On near-duplicate data, sizing the groups in a Python loop and ranking every
  representative exactly before expanding cost ~0.5 ms. Hybrid p50, start of that work
  against its end, alternating runs: clustered 2.01 / 2.18 → 1.95 / 2.11 ms, near-duplicate
  2.74 / 3.03 → 2.01 / 1.81.
- Tried and dropped: an inverted-file index (k-means lists over the sketches, the nearest
  lists scanned by sketch and the best rows ranked exactly) would make ingest nearly free
  and reached recall@10 0.997 at 0.45 ms on the clustered data, but on real USE vectors
  (near-duplicate set, SciFact claims as queries) only 0.59 / 0.71 / 0.81 / 0.88 scanning
  ~0.8k / 1.6k / 3k / 6k rows: claims are far from their abstracts, so the lists nearest
  the query miss them.
- Tried and dropped: usearch's int8 keeps a unit vector's components (~±0.04 at 512
  dimensions) as ×127 integers, ~3 bits of precision; scaling each vector to its largest
  component first (cosine does not change) lifted clustered recall@10 0.962 → 0.977 but
  did not let the graph be built cheaper (expansion 40: 0.898 either way).
- Tried and dropped: linking the graph over the rows' 128-d sketch-space projections
  (`vector_sketches`) instead of the 512-d rows: ingest CPU −18 to −25% and clustered
  recall@10 0.989 against 0.973, but with real USE claims over near-duplicate data recall@10
  at limit 10 fell to 0.92–0.94 (0.993), and at limit 100 it needed twice the rescore depth
  for 0.995, at 2.8 ms against 2.3 (one process, both indexes, queries alternating).
- The database keeps float16 vectors (half of the float32 before); rescoring already ran
  on float16, so nothing is lost.
- Near-duplicate vectors (cosine ≥ 0.98 to the nearest graph node, found by a narrow search
  when a row enters the graph, or to one of the 64 rows before it) share that node; the
  search expands the best groups in the graph's order to at least 100 rows and ranks those
  exactly (ranking the nodes exactly first cost 0.3 ms a search for recall@10 0.993 against
  0.997, one process, old and new alternating per query). HNSW links near-identical
  vectors poorly, so without this recall@10 on neardup stayed under 0.89 for every graph
  setting tried (int8, float16, bfloat16; 16 or 32 links; search breadth up to 256); with
  it, 0.98 — and a copy costs a lookup, not a graph insertion. The lookup costs ~25% of a
  graph insertion on data without copies.
- Deletes flip a live bit (the graph keeps the node and the allowed mask drops it); the
  workspace is rebuilt when the dead outnumber the live, so a delete costs ~a millisecond
  and a rebuild is paid once per N deletes.
- Filtered vector search scans the allowed rows exactly when they are under 12% of the
  graph or 2,048 rows, else oversamples the graph and widens. A large exact scan is first
  shortlisted by 128-byte int8 sketches of the rows (a fixed orthonormal projection, kept
  in a file beside the rows, computed as rows enter the graph) and only the best
  max(10 × limit, 1,000) are ranked against the float16 rows: at 10% of 100k, 3.5 → ~1.5 ms
  CPU (the sketches are scored without a float32 copy of each block: that copy was fresh
  memory every query, and its page faults tripled the shortlist's cost when other searches
  ran between, as here: filtered 10% p50 3.6-4.0 → 3.0 ms)
  with recall@10 against the exact scan 0.999 on clustered and 0.986 on near-duplicate
  data (0.94 with 400 rows, 0.998 with 2,000 for +0.4 ms: copies differ by less than a
  sketch can see). At 1M a 10% filter is 100k rows: 13 ms with sketches (top
  10 as the exact scan's) against 8.7 ms through the graph with top-10 recall 0.89; the
  exact-scan rule stays, for the recall. The sketches are now scored by NumKong's int8
  kernels (numpy has no int8 SIMD product) into one gather buffer, and the best are found
  above a floor from a sample of the scores: the shortlist of 100k rows 7.7-8.5 → 3.8 ms.
  Scoring half of them in a second thread made the vector leg alone 4.3 → 2.6 ms but not
  the hybrid (5.1-5.4 ms either way: its keyword leg already holds the other core).
- A filtered keyword leg scores only the allowed postings when they are under 60% of the
  query's, taken out by position (flatnonzero, then three small gathers: a boolean
  compress of each array cost twice as much). 1M, keyword leg p50: 1% 3.2 → 1.3 ms,
  10% 3.2 → 2.0, 50% 3.6 → 3.4; the 10% filter's hybrid p50 9.7 → 5.2 ms.
- Search breadth 256: at 100k recall@10 0.945 → 0.977 at no measurable cost; at 1M on the
  old graph 0.75 → 0.88, and no better at 512 — there the graph's links (16, built at
  breadth 64) limited it, and building at 40 instead cut recall to 0.90 at 100k. Graphs
  now link 24 neighbours a node, built at breadth 96: 1M clustered recall@10 0.980 at
  breadth 384, 0.978 at 256 for 0.08 ms less (the settings compared are in
  vector_index.py).
- The keyword leg sums float32 contributions with np.add.at into a dense array and ranks
  only the slots above a floor taken from a sample of the postings; a term's postings are
  slices of each segment, joined once, and each posting holds its chunk's length, so BM25's
  length part is read in order (looked up by slot, it was a random read per posting: 1M
  keyword leg 2.6-3.0 → 2.0-2.1 ms, for 2 bytes a posting); a term's idf weight is spread
  over its postings by np.repeat, not gathered per posting (1.84 → 1.52 ms); df is the
  slices' lengths, less the dead postings when a slot was deleted (counting only live ones
  with a weighted bincount over every posting cost ~0.2 ms a query at 100k). Tried
  and dropped: MaxScore (skipping the common words' postings except for chunks that can
  still reach the k-th score) with idf-only bounds — the skipped terms hold ~50% of the
  postings but leave ~47k candidates at 1M, so it gained 20% at 1M and lost 10% at 100k;
  tighter bounds need each term's largest tf and shortest chunk per segment.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from tests.bench.bench_data import (
    DIM,
    chunk_texts,
    clustered_queries,
    clustered_vectors,
    documents,
    exact_top,
    neardup_queries,
    neardup_vectors,
    unit,
)

REPO = Path(__file__).resolve().parents[2]
queries = clustered_queries  # the name bench_engines imports
__all__ = ["DIM", "chunk_texts", "clustered_vectors", "exact_top", "queries"]


def eval_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get("BUNKO_EVAL_DIR") or REPO.parent / "shared" / "eval")


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
    """Per call name: wall ms, the process's CPU ms (a hybrid search's vector leg runs in
    another thread), and results. The calls take turns on each query, so a busy neighbour
    on a shared machine slows them all alike."""
    wall: dict = {name: [] for name in calls}
    cpu: dict = {name: [] for name in calls}
    out: dict = {name: [] for name in calls}
    for text, vector in pairs:
        for name, call in calls.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            out[name].append(call(text, vector))
            wall[name].append((time.perf_counter() - start) * 1000)
            cpu[name].append((time.process_time() - start_cpu) * 1000)
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


# --- one run ---

WS = "bench"
SEARCH_EVERY = 0.1  # seconds between searches while the data is written


def load_data(n: int, args: argparse.Namespace) -> dict:
    scifact = eval_dir(args.eval_dir) / "scifact"
    texts, sources = chunk_texts(scifact / "corpus.jsonl", n)
    bounds, doc_categories = documents(n, args.seed)
    if args.dataset == "neardup":
        cache = Path(args.cache_dir).expanduser()
        vectors, claims = neardup_vectors(scifact, cache, sources, seed=args.seed)
        query_texts, query_vectors = neardup_queries(scifact, claims, args.queries)
    else:
        vectors, abstracts = clustered_vectors(sources, seed=args.seed)
        query_texts, query_vectors = clustered_queries(scifact, abstracts, args.queries, args.seed)
    categories = np.empty(n, dtype=object)
    for (start, end), category in zip(bounds, doc_categories, strict=True):
        categories[start:end] = category
    data = {
        "texts": texts,
        "bounds": bounds,
        "categories": categories,
        "query_texts": query_texts,
        "query_vectors": query_vectors,
        "truth10": exact_top(vectors, query_vectors, 10),
        "truth10_p10": exact_top(vectors, query_vectors, 10, mask=categories == "p10"),
    }
    # Kept as float16 from here (the index stores float16 too): half the benchmark's own
    # memory. The exact answers above came from the float32 originals.
    data["vectors"] = vectors.astype(np.float16)
    return data


def entries(data: dict, doc: int, *, vectors=None) -> list:
    from bunko.ports import IndexEntry

    start, end = data["bounds"][doc]
    vectors = data["vectors"] if vectors is None else vectors
    return [
        IndexEntry(
            chunk_id=f"c{i}",
            document_id=f"d{doc}",
            workspace_id=WS,
            revision=1,
            text=data["texts"][i],
            category=data["categories"][i],
            vector=vectors[i - start] if vectors is not data["vectors"] else vectors[i],
        )
        for i in range(start, end)
    ]


def run_one(n: int, args: argparse.Namespace) -> dict:
    from bunko.adapters.local.engine import LocalSearchIndex
    from bunko.ports import SearchFilter

    data = load_data(n, args)
    row: dict = {"chunks": n, "dataset": args.dataset}
    directory = Path(tempfile.mkdtemp(prefix="bench-index-", dir=args.tmp_dir))
    reset_peak_rss()
    rss_before = row["data_rss_mib"] = rss_mib()
    index = LocalSearchIndex(directory, dimension=DIM)
    every = SearchFilter(workspace_id=WS)
    pairs = list(zip(data["query_texts"], data["query_vectors"], strict=True))
    stop, during = threading.Event(), []
    searcher = threading.Thread(
        target=search_while_writing, args=(index, pairs, every, args.limit, stop, during)
    )
    wall, cpu = time.perf_counter(), cpu_seconds()
    searcher.start()
    for doc in range(len(data["bounds"])):
        index.index(entries(data, doc))
    row["calls_s"] = time.perf_counter() - wall
    index.flush()
    row["ingest_s"] = time.perf_counter() - wall
    stop.set()
    searcher.join()
    row["ingest_cpu_s"] = cpu_seconds() - cpu
    row["ingest_search_p50"], row["ingest_search_p95"] = pct(during, 50), pct(during, 95)
    by_category = {c: SearchFilter(workspace_id=WS, category=c) for c in ("p1", "p10", "p50")}
    limit = args.limit
    calls = {
        "hybrid": lambda t, v: index.hybrid_search(t, v, every, limit),
        "keyword": lambda t, v: index.keyword_search(t, every, limit),
        "vector": lambda t, v: index.vector_search(v, every, limit),
        "vector10": lambda t, v: index.vector_search(v, every, 10),
        "p10_vector10": lambda t, v: index.vector_search(v, by_category["p10"], 10),
    }
    for name, filters in by_category.items():
        calls[name] = lambda t, v, f=filters: index.hybrid_search(t, v, f, limit)
    for text, vector in pairs[:20]:  # warm-up
        calls["hybrid"](text, vector)
    wall, cpu, out = interleaved(calls, pairs)
    row |= {
        "hybrid_p50": pct(wall["hybrid"], 50),
        "hybrid_p95": pct(wall["hybrid"], 95),
        "hybrid_cpu_p50": pct(cpu["hybrid"], 50),
        "keyword_p50": pct(wall["keyword"], 50),
        "vector_p50": pct(wall["vector"], 50),
        "p1_p50": pct(wall["p1"], 50),
        "p10_p50": pct(wall["p10"], 50),
        "p10_p95": pct(wall["p10"], 95),
        "p10_cpu_p50": pct(cpu["p10"], 50),
        "vector_cpu_p50": pct(cpu["vector"], 50),
        "p50_p50": pct(wall["p50"], 50),
        "filtered_full": float(np.mean([len(h[1]) == limit for h in out["p10"]])),
        "recall10": recall(out["vector10"], data["truth10"]),
        "recall10_at_limit": recall([h[:10] for h in out["vector"]], data["truth10"]),
        "p10_recall10": recall(out["p10_vector10"], data["truth10_p10"]),
        "peak_rss_mib": peak_rss_mib(),
        "rss_growth_mib": peak_rss_mib() - rss_before,
    }
    row |= churn(index, data, pairs, every, limit, args.seed)
    index.close()
    row |= child(["--reopen", str(directory)], args, prefix="reopen")
    row |= child(["--crash-write", str(directory)], args, prefix="crash", check=False)
    row |= child(["--reopen", str(directory)], args, prefix="crash_reopen")
    row["crash_lost"] = row["crash_write_committed"] - (row["crash_reopen_count"] - row["count"])
    subprocess.run(["rm", "-rf", str(directory)], check=False)
    return row


def search_while_writing(index, pairs: list, every, limit: int, stop, out: list) -> None:
    """A user searching every SEARCH_EVERY seconds, from another thread, while the
    documents are written (ms each into `out`): what a search costs during a bulk load."""
    for k in itertools.count():
        if stop.wait(SEARCH_EVERY):
            return
        text, vector = pairs[k % len(pairs)]
        began = time.perf_counter()
        index.hybrid_search(text, vector, every, limit)
        out.append((time.perf_counter() - began) * 1000)


def churn(index, data: dict, pairs: list, every, limit: int, seed: int) -> dict:
    """Delete 2% of the documents and re-index another 2% with new vectors, a search after
    each call; then check the counts."""
    rng = np.random.default_rng(seed + 3)
    docs = rng.permutation(len(data["bounds"]))[: max(2, len(data["bounds"]) // 25)]
    deletes, updates, searches = [], [], []
    for k, doc in enumerate(docs.tolist()):
        start, end = data["bounds"][doc]
        began = time.perf_counter()
        if k % 2 == 0:
            index.delete_document(WS, f"d{doc}")
            deletes.append((time.perf_counter() - began) * 1000)
        else:
            moved = unit(data["vectors"][start:end].astype(np.float32) + 0.05 / np.sqrt(DIM))
            index.index(entries(data, doc, vectors=moved))
            updates.append((time.perf_counter() - began) * 1000)
        text, vector = pairs[k % len(pairs)]
        began = time.perf_counter()
        index.hybrid_search(text, vector, every, limit)
        searches.append((time.perf_counter() - began) * 1000)
    deleted = sum(data["bounds"][d][1] - data["bounds"][d][0] for d in docs[::2].tolist())
    count = index.count(WS)
    assert count == len(data["texts"]) - deleted, (count, deleted)
    return {
        "delete_p50": pct(deletes, 50),
        "update_p50": pct(updates, 50),
        "update_p95": pct(updates, 95),
        "churn_hybrid_p50": pct(searches, 50),
        "count": count,
    }


def child(extra: list[str], args: argparse.Namespace, *, prefix: str, check: bool = True):
    command = [sys.executable, "-m", "tests.bench.bench_index", *extra]
    command += ["--eval-dir", str(eval_dir(args.eval_dir))]
    done = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, text=True, check=check)
    lines = done.stdout.strip().splitlines()
    return {f"{prefix}_{k}": v for k, v in json.loads(lines[-1]).items()}


def reopen(directory: Path, args: argparse.Namespace) -> dict:
    """Constructor → first hybrid answer, in this fresh process."""
    from bunko.adapters.local.engine import LocalSearchIndex
    from bunko.ports import SearchFilter

    scifact = eval_dir(args.eval_dir) / "scifact"
    text = clustered_queries(scifact, np.eye(DIM, dtype=np.float32), 1, 0)[0][0]
    vector = unit(np.random.default_rng(0).standard_normal(DIM).astype(np.float32))
    began = time.perf_counter()
    index = LocalSearchIndex(directory, dimension=DIM)
    keyword, semantic = index.hybrid_search(text, vector, SearchFilter(workspace_id=WS), 100)
    seconds = time.perf_counter() - began
    assert keyword and semantic
    return {"s": seconds, "rss_mib": rss_mib(), "count": index.count(WS)}


def crash_write(directory: Path, args: argparse.Namespace) -> None:
    """Write 15k chunks in documents of 30, print how many were committed, then die."""
    from bunko.adapters.local.engine import LocalSearchIndex
    from bunko.ports import IndexEntry

    rng = np.random.default_rng(11)
    index = LocalSearchIndex(directory, dimension=DIM)
    committed = 0
    for doc in range(500):
        vectors = unit(rng.standard_normal((30, DIM), dtype=np.float32))
        index.index(
            [
                IndexEntry(
                    f"crash{doc}-{i}", f"crash{doc}", WS, 1, f"crash text {doc} {i}", None, v
                )
                for i, v in enumerate(vectors)
            ]
        )
        committed += 30
    print(json.dumps({"write_committed": committed}), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def recall(hits: list, truth: np.ndarray) -> float:
    k = truth.shape[1]
    found = [{int(h.chunk_id[1:]) for h in got[:k]} for got in hits]
    return float(np.mean([len(f & set(t.tolist())) / k for f, t in zip(found, truth, strict=True)]))


COLUMNS = [
    ("chunks", "chunks", "{:,}"),
    ("dataset", "data", "{}"),
    ("ingest_s", "ingest s", "{:.1f}"),
    ("ingest_cpu_s", "ingest CPU s", "{:.1f}"),
    ("ingest_search_p50", "search while ingesting p50 ms", "{:.1f}"),
    ("ingest_search_p95", "search while ingesting p95 ms", "{:.1f}"),
    ("hybrid_p50", "hybrid p50 ms", "{:.2f}"),
    ("hybrid_p95", "hybrid p95 ms", "{:.2f}"),
    ("hybrid_cpu_p50", "hybrid CPU p50", "{:.2f}"),
    ("keyword_p50", "kw p50", "{:.2f}"),
    ("vector_p50", "vec p50", "{:.2f}"),
    ("vector_cpu_p50", "vec CPU p50", "{:.2f}"),
    ("recall10", "recall@10", "{:.3f}"),
    ("recall10_at_limit", "recall@10 of 100", "{:.3f}"),
    ("p1_p50", "filt 1% p50", "{:.2f}"),
    ("p10_p50", "filt 10% p50", "{:.2f}"),
    ("p10_p95", "filt 10% p95", "{:.2f}"),
    ("p10_cpu_p50", "filt 10% CPU p50", "{:.2f}"),
    ("p50_p50", "filt 50% p50", "{:.2f}"),
    ("p10_recall10", "filt 10% recall@10", "{:.3f}"),
    ("delete_p50", "delete doc p50", "{:.2f}"),
    ("update_p50", "update doc p50", "{:.2f}"),
    ("churn_hybrid_p50", "hybrid p50 in churn", "{:.2f}"),
    ("reopen_s", "reopen s", "{:.2f}"),
    ("crash_reopen_s", "crash reopen s", "{:.2f}"),
    ("crash_lost", "lost", "{}"),
    ("data_rss_mib", "data MiB", "{:.0f}"),
    ("peak_rss_mib", "peak MiB", "{:.0f}"),
    ("rss_growth_mib", "index MiB", "{:.0f}"),
    ("reopen_rss_mib", "reopen RSS MiB", "{:.0f}"),
]


def print_table(rows: list[dict]) -> None:
    heads = [h for _, h, _ in COLUMNS]
    print("| " + " | ".join(heads) + " |")
    print("|" + "---|" * len(heads))
    for row in rows:
        print("| " + " | ".join(fmt.format(row[key]) for key, _, fmt in COLUMNS) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--datasets", default="clustered,neardup")
    parser.add_argument("--eval-dir")
    parser.add_argument("--cache-dir", default="~/.cache/bunko-bench", help="USE vectors")
    parser.add_argument("--tmp-dir", help="where the index is written (default: $TMPDIR)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--one-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--dataset", default="clustered", help=argparse.SUPPRESS)
    parser.add_argument("--reopen", help=argparse.SUPPRESS)
    parser.add_argument("--crash-write", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reopen:
        print(json.dumps(reopen(Path(args.reopen), args)))
        return
    if args.crash_write:
        crash_write(Path(args.crash_write), args)
        return
    if args.one_size:
        print(json.dumps(run_one(args.one_size, args)))
        return
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        for dataset in args.datasets.split(","):
            command = [sys.executable, "-m", "tests.bench.bench_index", "--one-size", str(size)]
            command += ["--dataset", dataset, "--queries", str(args.queries)]
            command += ["--limit", str(args.limit), "--seed", str(args.seed)]
            command += ["--eval-dir", str(eval_dir(args.eval_dir)), "--cache-dir", args.cache_dir]
            command += ["--tmp-dir", args.tmp_dir] if args.tmp_dir else []
            out = subprocess.run(command, cwd=REPO, check=True, stdout=subprocess.PIPE, text=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"{size:,} {dataset} done: {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
    print_table(rows)


if __name__ == "__main__":
    main()
