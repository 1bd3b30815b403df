"""Fit the calibrated-similarity table (bunko/services/calibration.py) on the BEIR sets.

    python tests/bench/fit_calibration.py collect DIR --embedder use [--max-docs 1000] -o F.json
    python tests/bench/fit_calibration.py fit F1.json F2.json ...

`collect` ingests DIR's corpus through the real pipeline and records, for every query, the
top candidates' (cosine, keyword coverage) with their relevance: the set's own queries
(answerable), the other sets' queries and random strings (unanswerable). `fit` fits a
logistic model P(relevant | cosine, coverage) over the candidates of all files, then reports
the abstention it gives at thresholds around the default min_score, per file.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.evaluation import load_beir
from bunko.evaluation.abstention import foreign_queries, random_queries
from bunko.ports import SearchFilter, TrainableEmbedder
from bunko.services.fusion import fuse, vector_weight_for

TOP = 20


def collect(
    directory: Path, embedder: str, max_docs: int | None, max_queries: int | None, out: Path
) -> None:
    data = load_beir(directory)
    corpus = data.corpus
    if max_docs:  # half relevant documents, half others, each a seeded sample
        relevant = sorted({d for rel in data.qrels.values() for d in rel} & set(corpus))
        rest = sorted(set(corpus) - set(relevant))
        random.Random(0).shuffle(relevant)
        random.Random(0).shuffle(rest)
        keep = set(relevant[: max_docs // 2]) | set(
            rest[: max_docs - min(len(relevant), max_docs // 2)]
        )
        corpus = {d: corpus[d] for d in sorted(keep)}
        data.queries = {q: t for q, t in data.queries.items() if set(data.qrels.get(q, {})) & keep}
    # A throw-away graph without the per-user upload rate (a corpus is one bulk load).
    with scratch_services(embedder=embedder) as (services, queue):
        path_of = {}
        for doc_id, text in corpus.items():
            doc = services.ingest.submit_text(
                DEFAULT_WORKSPACE_ID, path=f"{doc_id}.txt", content=text or "(empty)"
            )
            path_of[doc.id] = doc_id
        if isinstance(services.embedder, TrainableEmbedder) and not services.embedder.is_fitted:
            services.embedder.fit(list(corpus.values()))
        started = time.perf_counter()
        jobs = queue.take()
        for i in range(0, len(jobs), 256):
            services.pipeline.process(jobs[i : i + 256])
        print(f"indexed {len(corpus)} docs in {time.perf_counter() - started:.0f}s", flush=True)
        records = collect_records(services, data, directory, path_of, max_queries)
    meta = {"dataset": directory.name, "embedder": embedder, "documents": len(corpus)}
    out.write_text(json.dumps({"meta": meta, "records": records}), encoding="utf-8")


def collect_records(
    services, data, directory: Path, path_of: dict[str, str], max_queries: int | None = None
) -> list[dict]:
    """Every query's top candidates (cosine, coverage, relevant) as the route that serves
    the default workspace ranks them (its model's query vector and vector weight)."""
    route = services.search.route(DEFAULT_WORKSPACE_ID)
    filters = SearchFilter(workspace_id=DEFAULT_WORKSPACE_ID)
    records = []
    answerable = sorted(data.queries)
    if max_queries:
        random.Random(0).shuffle(answerable)
        answerable = sorted(answerable[:max_queries])
    groups = {"answerable": {q: data.queries[q] for q in answerable}}
    for source, texts in foreign_queries(directory, count=max_queries or 400).items():
        groups[source] = dict(enumerate(texts))
    groups["random"] = dict(enumerate(random_queries()))
    for group, queries in groups.items():
        for qid, query in queries.items():
            vector = services.search.query_vector(query, route.embedder)
            keyword, semantic = route.index.hybrid_search(query, vector, filters, 100)
            weight = route.index.keyword_weight(query, filters)
            hits = fuse(
                keyword,
                semantic,
                vector_weight=vector_weight_for(route.embedder),
                keyword_weight=weight,
            )[:TOP]
            rel = data.qrels.get(str(qid), {}) if group == "answerable" else {}
            hit_rows = [
                [
                    round(h.vector_score, 5),
                    round(h.coverage, 5),
                    int(rel.get(path_of[h.document_id], 0) > 0),
                ]
                for h in hits
            ]
            records.append({"group": group, "query": query, "hits": hit_rows})
    return records


def features(cos: np.ndarray, cov: np.ndarray) -> np.ndarray:
    return np.stack([cos, cov, cos * cov], axis=1)


def fit(files: list[Path]) -> None:
    from sklearn.linear_model import LogisticRegression

    loaded = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    rows = np.array(
        [h for d in loaded for r in d["records"] for h in r["hits"][:10]], dtype=np.float64
    )
    model = LogisticRegression(C=10.0, class_weight="balanced", max_iter=1000)
    model.fit(features(rows[:, 0], rows[:, 1]), rows[:, 2])
    coef = [round(float(c), 4) for c in model.coef_[0]]
    bias = round(float(model.intercept_[0]), 4)
    print(json.dumps({"cosine": coef[0], "coverage": coef[1], "product": coef[2], "bias": bias}))

    def score(hits: list) -> np.ndarray:
        if not hits:
            return np.zeros(0)
        h = np.array(hits, dtype=np.float64)
        return model.decision_function(features(h[:, 0], h[:, 1]))

    for d in loaded:
        best_rel, best_any = [], {}
        for r in d["records"]:
            s = score(r["hits"][:10])
            top = float(s.max()) if len(s) else -1e9
            if r["group"] == "answerable":
                rel = [x for x, h in zip(s, r["hits"][:10], strict=True) if h[2]]
                if rel:
                    best_rel.append(max(rel))
            else:
                best_any.setdefault(r["group"], []).append(top)
        print(d["meta"])
        for p in (0.1, 0.2, 0.3, 0.4, 0.5):
            logit = np.log(p / (1 - p))
            kept = np.mean(np.array(best_rel) >= logit)
            refused = {
                g: round(float(np.mean(np.array(v) < logit)), 3) for g, v in best_any.items()
            }
            print(f"  p={p}: kept {kept:.3f}  refused {refused}")


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("directory", type=Path)
    c.add_argument("--embedder", default="use")
    c.add_argument("--max-docs", type=int)
    c.add_argument("--max-queries", type=int)
    c.add_argument("-o", "--out", type=Path, required=True)
    f = sub.add_parser("fit")
    f.add_argument("files", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.directory, args.embedder, args.max_docs, args.max_queries, args.out)
    else:
        fit(args.files)


if __name__ == "__main__":
    main()
