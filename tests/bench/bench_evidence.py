"""What the evidence signal costs a question (issue 45: at most ~50 ms at p50 on 2 cores).

    .venv/bin/python -m tests.bench.bench_evidence ../shared/eval/xquad-dev/en [--queries 120]

Ingests the set's corpus with the default model, then asks its questions through the search
service three ways, in turn, question by question (so a busy machine slows each alike): the
packaged row with the sentence caches cleared first (each chunk read cold, as the first
question over a new library reads it); the packaged row again, warm (as a server that has
answered before reads it: the window's documents, their first chunks, every sentence's
terms); and the same row without evidence (the gate reads only the background coverage).
Prints p50 and p90 of each, and what evidence adds to the p50 (each way embeds the question
alike).

The pipeline stores each chunk's sentence reading at ingest (domain/sentence_terms.py), so a
cold question decodes it; `--unstored` leaves it out, as a library indexed before it was
(each chunk's sentences read from its text on first use).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from dataclasses import replace
from pathlib import Path

from bunko.bootstrap.scratch import scratch_services
from bunko.evaluation.beir import load_beir
from bunko.services.search import calibration as calibrations
from bunko.services.search.evidence import _context_terms, _stored_units, _units
from bunko.services.search.search import SearchOptions

ROW = "use-multilingual-v3"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument(
        "--unstored", action="store_true", help="index without the stored sentence readings"
    )
    args = parser.parse_args()
    data = load_beir(args.directory)
    questions = sorted(data.queries.values())
    random.Random(0).shuffle(questions)
    questions = questions[: args.queries]
    packaged = calibrations.CALIBRATIONS[ROW]
    without = replace(packaged, evidence=0.0, reach=0.0, evidence_reach=0.0, absent=0.0)
    times: dict[str, list[float]] = {"evidence": [], "no evidence": [], "evidence, cold": []}
    with scratch_services(embedder="use") as (services, queue):
        for doc_id, text in data.corpus.items():
            services.ingest.submit_text("default", path=f"{doc_id}.txt", content=text)
        jobs = queue.take()
        if args.unstored:
            services.pipeline.read_sentences = None
        for i in range(0, len(jobs), 256):
            services.pipeline.process(jobs[i : i + 256])
        generation = services.search.generation("default")  # loads the model first
        services.search.query_vector("warm up", generation.embedder)
        options = SearchOptions(limit=10)
        for q in questions:
            # The cold way first: it clears the sentence cache, so a warm way run after it
            # (as before) read the next question's window mostly cold.
            for label, row, cold in (
                ("evidence, cold", packaged, True),
                ("evidence", packaged, False),
                ("no evidence", without, False),
            ):
                calibrations.CALIBRATIONS[ROW] = row
                if cold:
                    _units.cache_clear()
                    _stored_units.cache_clear()
                    _context_terms.cache_clear()
                start = time.perf_counter()
                services.search.search("default", q, options)
                times[label].append((time.perf_counter() - start) * 1000)
        calibrations.CALIBRATIONS[ROW] = packaged
    stored = "unstored" if args.unstored else "stored at ingest"
    print(
        f"{len(questions)} questions over {len(data.corpus)} passages "
        f"({args.directory.name}, sentence readings {stored})"
    )
    base = statistics.median(times["no evidence"])
    for label, ms in times.items():
        p50 = statistics.median(ms)
        p90 = statistics.quantiles(ms, n=10)[-1]
        print(f"  {label:15s} p50 {p50:7.1f} ms  p90 {p90:7.1f} ms  p50 +{p50 - base:.1f} ms")


if __name__ == "__main__":
    main()
