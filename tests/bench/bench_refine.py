"""Progressive quality (BUNKO_REFINE_EMBEDDER): how soon files are searchable, how good search
is then, and how good once the stronger model has refined them, as a user adds files.

    .venv/bin/python -m tests.bench.bench_refine [--set jsquad-valid] [--docs N]

On a throw-away data folder with the fast model (USE) and e5 refining:
1. arrive: the documents are uploaded and indexed one at a time (one pipeline call each, as
   files dropped one by one): "searchable chunks/s" is the fast model's end-to-end pace.
2. fast: nDCG@10 / Recall@100 through the search service (one hit per document, the
   default fusion and weight of the model that serves) while the fast generation serves.
3. refine: the refiner brings the workspace's e5 generation up to metadata (what its
   background thread does once the machine is quiet): "refined chunks/s".
4. refined: the same queries, now answered by e5.
5. one more file: a new document arrives while e5 serves: the seconds until it is
   searchable (the fast model), then until e5 serves again with it.
The peer is e5 as the only model (BUNKO_EMBEDDER=e5): its ingest pace is the refined pace
here, and its quality the refined figures (the same index, built the same way).

Each phase also reports abstention at the default min_score (as `bunko eval`). The refined
model's calibration records come from `fit_calibration --embedder e5` (its `collect` builds
the e5 generation directly, as search serves it).

`--three-legs` also measures, once refined, a question for the next step: both generations
exist, so could a search fuse BM25, e5 and USE cosines (convex, min-max per leg, weights
keyword / e5 / USE) for more than e5 and BM25 alone?
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from bunko.bootstrap.scratch import scratch_services
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.evaluation import abstention
from bunko.evaluation.beir import load_beir
from bunko.evaluation.metrics import ndcg_at, recall_at
from bunko.ports import SearchFilter
from bunko.services.search.fusion import _minmax
from bunko.services.search.search import SearchOptions

REPO = Path(__file__).resolve().parents[2]
RANKED = SearchOptions(limit=100, min_score=0.0)
# (e5 weight, USE weight); the keyword leg gets the rest. (0.5, 0.0) is today's refined search.
THREE_LEGS = [(0.5, 0.0), (0.45, 0.1), (0.4, 0.15), (0.35, 0.2), (0.4, 0.25), (0.3, 0.3)]


def _quality(services, data, query_ids: list[str], path_of: dict[str, str], unanswerable) -> dict:
    ndcg, recall = [], []
    for qid in query_ids:
        found = services.search.search(WS, data.queries[qid], RANKED)
        ranked = list(dict.fromkeys(path_of[i.document_id] for i in found.items))
        ndcg.append(ndcg_at(ranked, data.qrels[qid]))
        recall.append(recall_at(ranked, data.qrels[qid]))
    answerable = {
        q: (data.queries[q], {d for d, r in data.qrels[q].items() if r > 0}) for q in query_ids
    }
    figures = abstention.evaluate(
        services.search, WS, answerable, path_of, unanswerable,
        min_score=services.settings.min_score,
    )  # fmt: skip
    return {
        "model": services.search.generation(WS).embedder.name,
        "ndcg@10": round(sum(ndcg) / len(ndcg), 4),
        "recall@100": round(sum(recall) / len(recall), 4),
        "kept": figures["answerable_kept"],
        "refused": figures["unanswerable_refused"],
    }


def _three_legs(services, data, query_ids: list[str], path_of: dict[str, str]) -> dict:
    """nDCG@10 of convex fusion over three legs, per THREE_LEGS weights."""
    generations = services.refiner.generations
    fast, refined, where = generations.default, generations.refined, SearchFilter(WS)
    ndcg: dict[str, list[float]] = {f"e5 {e} / USE {u}": [] for e, u in THREE_LEGS}
    for qid in query_ids:
        query = data.queries[qid]
        keyword, e5 = refined.index.hybrid_search(
            query, refined.embedder.embed_query(query), where, 100
        )
        use = fast.index.vector_search(fast.embedder.embed_query(query), where, 100)
        best = max((h.score for h in keyword), default=0.0) or 1.0
        legs = [_minmax({h.chunk_id: h.score / best for h in keyword})]
        legs += [_minmax({h.chunk_id: max(0.0, h.score) for h in hits}) for hits in (e5, use)]
        doc_of = {h.chunk_id: h.document_id for h in (*keyword, *e5, *use)}
        for (we, wu), name in zip(THREE_LEGS, ndcg, strict=True):
            weights = (1 - we - wu, we, wu)
            fused = {
                cid: sum(w * leg.get(cid, 0.0) for w, leg in zip(weights, legs, strict=True))
                for cid in doc_of
            }
            order = sorted(fused, key=lambda c: -fused[c])
            ranked = list(dict.fromkeys(path_of[doc_of[c]] for c in order))
            ndcg[name].append(ndcg_at(ranked, data.qrels[qid]))
    return {name: round(sum(v) / len(v), 4) for name, v in ndcg.items()}


def _arrive(services, queue, doc_id: str, text: str, path_of: dict[str, str]) -> None:
    doc = services.ingest.submit_text(WS, path=f"{doc_id}.txt", content=text or "(empty)")
    path_of[doc.id] = doc_id
    services.pipeline.process(queue.take())


def run(
    eval_dir: Path,
    name: str,
    docs: int | None,
    three_legs: bool = False,
) -> dict:
    data = load_beir(eval_dir / name)
    corpus = list(data.corpus.items())
    extra_id, extra_text = corpus.pop()  # the file that arrives while e5 serves
    corpus = corpus[:docs] if docs else corpus
    kept = {d for d, _ in corpus}
    query_ids = sorted(
        q for q in data.queries if any(d in kept and r > 0 for d, r in data.qrels[q].items())
    )
    report: dict = {"set": name, "documents": len(corpus), "queries": len(query_ids)}
    unanswerable = abstention.unanswerable_queries(eval_dir / name)
    overrides = {"embedder": "use", "refine_embedder": "e5", "refine_quiet_seconds": 0}
    with scratch_services(**overrides) as (services, queue):
        path_of: dict[str, str] = {}
        services.search.query_vector("warm up")  # load the fast model outside the clock
        started = time.perf_counter()
        for doc_id, text in corpus:
            _arrive(services, queue, doc_id, text, path_of)
        took = time.perf_counter() - started
        chunks = services.metadata.count_chunks(WS)
        report["chunks"] = chunks
        report["searchable_seconds"] = round(took, 1)
        report["searchable_chunks_per_s"] = round(chunks / took, 1)
        report["fast"] = _quality(services, data, query_ids, path_of, unanswerable)

        refiner = services.refiner
        refiner.generations.refined.embedder.embed_query("warm up")
        started = time.perf_counter()
        assert refiner.refine(WS)
        took = time.perf_counter() - started
        report["refine_seconds"] = round(took, 1)
        report["refined_chunks_per_s"] = round(chunks / took, 1)
        report["refined"] = _quality(services, data, query_ids, path_of, unanswerable)
        if three_legs:
            report["three_legs_ndcg@10"] = _three_legs(services, data, query_ids, path_of)

        started = time.perf_counter()
        _arrive(services, queue, extra_id, extra_text, path_of)
        searchable = time.perf_counter() - started
        serving_after_write = services.search.generation(WS).embedder.name
        assert refiner.refine(WS)
        report["one_more_file"] = {
            "chunks": services.metadata.count_chunks(WS) - chunks,
            "searchable_s": round(searchable, 2),
            "served_by_until_refined": serving_after_write,
            "refined_again_s": round(time.perf_counter() - started - searchable, 2),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=None)
    parser.add_argument("--set", default="jsquad-valid")
    parser.add_argument("--docs", type=int, default=None, help="the first N documents only")
    parser.add_argument("--three-legs", action="store_true", help="measure 3-leg fusion too")
    args = parser.parse_args()
    eval_dir = args.eval_dir or Path(
        os.environ.get("BUNKO_EVAL_DIR") or REPO.parent / "shared" / "eval"
    )
    report = run(eval_dir, args.set, args.docs, args.three_legs)
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
