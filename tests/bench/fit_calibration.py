"""Fit a model's calibration row (bunko/services/search/calibration.py) on BEIR sets: one command.

    python -m tests.bench.fit_calibration --embedder use ../shared/eval/scifact \\
        ../shared/eval/jsquad-valid ../shared/eval/xquad-dev/en ../shared/eval/xquad-dev/de

For each set it ingests, through the real pipeline, the whole corpus (or `--max-docs` of it:
every judged document of `--max-queries` sampled questions, then others) and the seeded
libraries of one and ten documents `bunko eval` measures (evaluation/libraries.py), and
records every question's top ten candidates, ranked as search ranks them (the adaptive
weight): raw cosine, engine coverage, background coverage and whether it is relevant. Unanswerable questions: the other sets' over
another corpus, random strings, and other-topic questions in the small libraries.

Then it searches rows (a·cos' + b·coverage + e·background + c·cos'·background + d, cos' on the
model's measured scale) for the one that keeps the most answerable questions (the mean over
every set and library size) while refusing ≥ 0.95 of every unanswerable group, ≥ 0.90 of
other-topic questions in ten-document libraries where topics are articles (SciFact's topics
are single abstracts, all biomedical: reported, not required), and prints it with its
figures. `--records F` saves (and `--load F` reuses) the candidates.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from pathlib import Path

import numpy as np

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.evaluation import libraries, load_beir
from bunko.evaluation.abstention import foreign_queries, random_queries
from bunko.evaluation.answers import load_answers
from bunko.ports import SearchFilter
from bunko.services.search.fusion import fuse, query_vector_weight, vector_weight_for
from bunko.services.search.model_scale import measure_scale
from bunko.services.search.relevance_gate import TextSignals, gate_window, window_signals

TOP = 10
THRESHOLD = 0.3  # the default min_score the row is chosen for
KEEP_LARGE = 0.97
MUST_KEEP = ("scifact", "jsquad-valid")  # the large sets whose kept share must not regress
LOGIT = float(np.log(THRESHOLD / (1 - THRESHOLD)))


def _bulk(services, queue, workspace_id: str, docs: dict[str, str]) -> dict[str, str]:
    path_of = {}
    for doc_id, text in docs.items():
        doc = services.ingest.submit_text(workspace_id, path=f"{doc_id}.txt", content=text or "-")
        path_of[doc.id] = doc_id
    jobs = queue.take()
    for i in range(0, len(jobs), 256):
        services.pipeline.process(jobs[i : i + 256])
    return path_of


def collect(directory: Path, embedder: str, max_docs: int | None, max_queries: int) -> dict:
    data = load_beir(directory)
    records: list[dict] = []
    with scratch_services(embedder=embedder) as (services, queue):
        route = services.search.route(DEFAULT_WORKSPACE_ID)
        ranking_scale = services.search.calibration_for(
            vector_used=True, method="convex", embedder=route.embedder
        ).scale

        def record(workspace_id, group, query, relevant, id_of):
            filters = SearchFilter(workspace_id=workspace_id)
            vector = services.search.query_vector(query, route.embedder)
            keyword, semantic = route.index.hybrid_search(query, vector, filters, 100)
            weight = route.index.keyword_weight(query, filters) if keyword else 0.0
            vw = query_vector_weight(  # ranked as search ranks: the weight follows the query
                vector_weight_for(route.embedder), keyword, semantic, weight, ranking_scale
            )
            fused = fuse(keyword, semantic, vector_weight=vw, keyword_weight=weight)
            window = gate_window(fused, TOP)  # read as the gate reads it
            ids = [h.chunk_id for h in window]
            text = {c.id: c.content for c in services.metadata.get_chunks_by_ids(workspace_id, ids)}
            signals = window_signals(query, text)
            none = TextSignals(0.0)
            rows = [
                [
                    round(h.vector_score, 5),
                    round(h.coverage, 5),
                    round(signals.get(h.chunk_id, none).background, 5),
                    round(signals.get(h.chunk_id, none).evidence, 5),
                    round(signals.get(h.chunk_id, none).reach, 5),
                    int(id_of.get(h.document_id) in relevant),
                ]
                for h in fused[:TOP]
            ]
            records.append({"group": group, "hits": rows})

        by_title = len(set(libraries.topics(data).values())) <= len(data.corpus) / 2
        for size, draws in libraries.DRAWS.items():
            for lib in libraries.draw_libraries(data, size, draws):
                docs = {d: data.corpus[d] for d in lib.documents}
                id_of = _bulk(services, queue, lib.workspace_id, docs)
                for q, rel in lib.answerable:
                    record(lib.workspace_id, f"lib{size}-answerable", q, rel, id_of)
                other = f"lib{size}-other" + ("" if by_title else "-per-document")
                for q in lib.unanswerable:
                    record(lib.workspace_id, other, q, set(), id_of)
        gold = load_answers(directory)
        for lib in libraries.draw_same_topic(data, gold) if gold else []:
            id_of = _bulk(
                services, queue, lib.workspace_id, {d: data.corpus[d] for d in lib.documents}
            )
            for q, rel in lib.answerable:
                record(lib.workspace_id, "same-topic-answerable", q, rel, id_of)
            for q in lib.unanswerable:
                record(lib.workspace_id, "same-topic-unanswered", q, set(), id_of)
        questions = sorted(data.queries)
        random.Random(0).shuffle(questions)
        questions = questions[:max_queries]
        corpus = data.corpus
        if max_docs and max_docs < len(corpus):
            keep = {d for q in questions for d in data.qrels[q] if d in corpus}
            rest = sorted(set(corpus) - keep)
            random.Random(0).shuffle(rest)
            keep |= set(rest[: max(0, max_docs - len(keep))])
            corpus = {d: corpus[d] for d in sorted(keep)}
        path_of = _bulk(services, queue, DEFAULT_WORKSPACE_ID, corpus)
        for q in questions:
            relevant = {d for d, g in data.qrels[q].items() if g > 0}
            record(DEFAULT_WORKSPACE_ID, "answerable", data.queries[q], relevant, path_of)
        for source, texts in foreign_queries(directory, count=max_queries).items():
            for q in texts:
                record(DEFAULT_WORKSPACE_ID, f"foreign:{source}", q, set(), path_of)
        for q in random_queries():
            record(DEFAULT_WORKSPACE_ID, "random", q, set(), path_of)
        scale = measure_scale(route.embedder) if route.embedder else None
    meta = {"dataset": directory.name, "embedder": embedder, "documents": len(corpus)}
    if scale is not None:
        meta["scale"] = [scale.unrelated, scale.related]
    return {"meta": meta, "records": records}


def _answerable(group: str) -> bool:
    return group == "answerable" or group.endswith("-answerable")


def _required(group: str, dataset: str = "") -> float:
    if group == "answerable" and dataset.split(":")[-1] in MUST_KEEP:
        return KEEP_LARGE  # what these corpora kept before small libraries counted
    if _answerable(group):
        return 0.0
    if group.endswith("-per-document"):
        # other abstracts of one field: a library of one must still refuse most of them
        return 0.90 if group.startswith("lib1-") else 0.0
    return 0.90 if group.startswith("lib10-") else 0.95


class Candidates:
    """Every (set, group)'s questions as arrays: features (n, TOP, 3: cosine, coverage,
    background) and masks."""

    def __init__(self, loaded: list[dict]) -> None:
        self.groups: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for d in loaded:
            lo, hi = d["meta"].get("scale", [0.0, 1.0])
            by_group: dict[str, list] = {}
            for r in d["records"]:
                hits = np.array([[*h[:3], h[-1]] for h in r["hits"]], dtype=np.float64).reshape(
                    -1, 4
                )
                if r["group"] == "answerable" and not hits[:, 3].any():
                    continue  # retrieval missed it: no row can keep it
                by_group.setdefault(r["group"].split(":")[0], []).append(hits)
            for group, rows in by_group.items():
                x = np.zeros((len(rows), TOP, 3))
                valid = np.zeros((len(rows), TOP), bool)
                relevant = np.zeros((len(rows), TOP), bool)
                for i, h in enumerate(rows):
                    n = len(h)
                    x[i, :n, 0] = (h[:, 0] - lo) / (hi - lo)
                    x[i, :n, 1:3] = h[:, 1:3]
                    valid[i, :n], relevant[i, :n] = True, h[:, 3] > 0
                name = f"{d['meta']['embedder']}:{d['meta']['dataset']}"
                self.groups[(name, group)] = (x, valid, relevant)

    def best(self, a: float, b: float, e: float, c: float) -> dict:
        """Per group, each question's deciding score without the bias: the best relevant
        candidate's (answerable) or the best candidate's (unanswerable)."""
        out = {}
        for key, (x, valid, relevant) in self.groups.items():
            s = a * x[..., 0] + b * x[..., 1] + e * x[..., 2] + c * x[..., 0] * x[..., 2]
            mask = valid & relevant if _answerable(key[1]) else valid
            out[key] = np.where(mask, s, -np.inf).max(axis=1)
        return out


BIASES = np.arange(-16, 0.01, 0.25)


def shares(best: dict, biases: np.ndarray) -> dict:
    """Per group, the share kept (answerable) or refused (unanswerable) at each bias."""
    out = {}
    for key, m in best.items():
        below = np.searchsorted(np.sort(m), LOGIT - biases) / len(m)  # refused at each bias
        out[key] = 1.0 - below if _answerable(key[1]) else below
    return out


def search_rows(candidates: Candidates, grid) -> list[tuple[float, tuple]]:
    found = []
    for a, b, e, c in grid:
        if a + c < 0 or e + 1.5 * c < 0:
            continue  # similarity must rise with each signal (cos' reaches ~1.5 on copies)
        s = shares(candidates.best(a, b, e, c), BIASES)
        ok = np.ones(len(BIASES), bool)
        for (dataset, group), v in s.items():
            ok &= v >= _required(group, dataset)
        if ok.any():
            kept = np.mean([v for (_, g), v in s.items() if _answerable(g)], axis=0)
            i = int(np.argmax(np.where(ok, kept, -1)))
            found.append((float(kept[i]), (a, b, e, c, float(BIASES[i]))))
    return sorted(found, key=lambda f: -f[0])


def report(candidates: Candidates, row: tuple) -> None:
    a, b, e, c, bias = row
    s = {k: float(v[0]) for k, v in shares(candidates.best(a, b, e, c), np.array([bias])).items()}
    for dataset in sorted({k[0] for k in s}):
        print(
            f"  {dataset}: "
            + ", ".join(f"{g} {v:.3f}" for (d, g), v in sorted(s.items()) if d == dataset)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directories", type=Path, nargs="*")
    parser.add_argument("--embedder", default="use")
    parser.add_argument("--max-docs", type=int)
    parser.add_argument("--max-queries", type=int, default=400)
    parser.add_argument("--records", type=Path, help="save the candidates here")
    parser.add_argument("--load", type=Path, nargs="*", default=[], help="reuse saved ones")
    args = parser.parse_args()
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in args.load]
    for directory in args.directories:
        loaded.append(collect(directory, args.embedder, args.max_docs, args.max_queries))
        print(f"collected {directory}", flush=True)
    if args.records:
        args.records.write_text(json.dumps(loaded), encoding="utf-8")
    candidates = Candidates(
        [d for item in loaded for d in (item if isinstance(item, list) else [item])]
    )
    grid = itertools.product(
        np.arange(0, 20.01, 1.0),
        np.arange(0, 12.01, 1.0),
        np.arange(0, 12.01, 1.0),
        (-4.0, 0.0, 4.0),
    )
    found = search_rows(candidates, grid)
    if not found:
        print("no row refuses enough of every unanswerable group")
        return
    for kept, row in found[:3]:
        print(f"mean kept {kept:.4f}: cosine {row[0]:g}, coverage {row[1]:g}, background "
              f"{row[2]:g}, product {row[3]:g}, bias {row[4]:g}")  # fmt: skip
        report(candidates, row)


if __name__ == "__main__":
    main()
