"""`bunko eval`: retrieval quality on a BEIR-format folder, measured through the real pipeline.

The corpus (title + text, as BEIR does) is ingested into a throw-away data folder with the
configured embedder; every test query runs both engines once, and each fusion method ranks
the same candidates, so the methods are compared on equal terms.
"""

from __future__ import annotations

import json
import math
import statistics
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.ports import IngestJob, SearchFilter, TrainableEmbedder
from bunko.services.fusion import fuse
from bunko.services.search import SearchOptions

CANDIDATES = 200
CONVEX_WEIGHTS = (0.1, 0.2, 0.3, 0.5, 0.7)


@dataclass
class BeirSet:
    corpus: dict[str, str]  # doc id -> "title\n\ntext"
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _jsonl(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def load_beir(directory: Path, *, split: str = "test") -> BeirSet:
    corpus = {}
    for row in _jsonl(directory / "corpus.jsonl"):
        title, text = (row.get("title") or "").strip(), (row.get("text") or "").strip()
        corpus[str(row["_id"])] = f"{title}\n\n{text}" if title else text
    queries = {str(r["_id"]): r["text"] for r in _jsonl(directory / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    with (directory / "qrels" / f"{split}.tsv").open(encoding="utf-8") as f:
        for n, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            if n == 0 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = {q: t for q, t in queries.items() if q in qrels}
    return BeirSet(corpus=corpus, queries=queries, qrels=qrels)


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in relevant.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {d for d, r in relevant.items() if r > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def mrr_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if relevant.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


class _CollectingQueue:
    def __init__(self) -> None:
        self.jobs: list[IngestJob] = []

    def enqueue(self, job: IngestJob) -> None:
        self.jobs.append(job)


def _methods(default_weight: float) -> dict[str, dict]:
    methods: dict[str, dict] = {
        "keyword": {"method": "keyword"},
        "vector": {"method": "vector"},
        "max": {"method": "max"},
        "rrf": {"method": "rrf"},
    }
    for w in sorted({*CONVEX_WEIGHTS, default_weight}):
        methods[f"convex(w={w:g})"] = {"method": "convex", "vector_weight": w}
    return methods


def run_evaluation(
    directory: Path,
    *,
    embedder: str | None = None,
    max_queries: int | None = None,
    vector_weight: float | None = None,
    progress: bool = True,
) -> dict:
    from tqdm import tqdm

    from bunko.bootstrap import build_services

    data = load_beir(Path(directory))
    query_ids = sorted(data.queries)[:max_queries] if max_queries else sorted(data.queries)
    with tempfile.TemporaryDirectory(prefix="bunko-eval-") as tmp:
        overrides = {"data_dir": Path(tmp)}
        if embedder:
            overrides["embedder"] = embedder
        if vector_weight is not None:
            overrides["vector_weight"] = vector_weight
        settings = Settings(**overrides)
        queue = _CollectingQueue()
        services = build_services(settings, queue=queue)
        path_of = {}
        started = time.perf_counter()
        for doc_id, text in data.corpus.items():
            doc = services.ingest.submit_text(
                DEFAULT_WORKSPACE_ID, path=f"{doc_id}.txt", content=text or "(empty)"
            )
            path_of[doc.id] = doc_id
        batch = 256
        with tqdm(total=len(queue.jobs), desc="indexing", unit="doc", disable=not progress) as bar:
            embedder = services.embedder
            if isinstance(embedder, TrainableEmbedder) and not embedder.is_fitted:
                embedder.fit(list(data.corpus.values()))  # LSA learns from the corpus itself
            for i in range(0, len(queue.jobs), batch):
                services.pipeline.process(queue.jobs[i : i + batch])
                bar.update(min(batch, len(queue.jobs) - i))
        index_seconds = time.perf_counter() - started
        chunks = services.metadata.count_chunks()

        methods = _methods(settings.vector_weight)
        scores: dict[str, dict[str, list[float]]] = {
            m: {"ndcg@10": [], "recall@100": [], "mrr@10": []} for m in methods
        }
        filters = SearchFilter(workspace_id=DEFAULT_WORKSPACE_ID)
        for qid in tqdm(query_ids, desc="querying", unit="query", disable=not progress):
            query = data.queries[qid]
            vector = services.search.query_vector(query)
            keyword_hits, vector_hits = services.index.hybrid_search(
                query, vector, filters, CANDIDATES
            )
            for name, spec in methods.items():
                ranked: list[str] = []
                for hit in fuse(
                    keyword_hits,
                    vector_hits,
                    method=spec["method"],
                    vector_weight=spec.get("vector_weight", 0.3),
                ):
                    beir_id = path_of[hit.document_id]
                    if beir_id not in ranked:
                        ranked.append(beir_id)
                relevant = data.qrels[qid]
                scores[name]["ndcg@10"].append(ndcg_at(ranked, relevant))
                scores[name]["recall@100"].append(recall_at(ranked, relevant))
                scores[name]["mrr@10"].append(mrr_at(ranked, relevant))

        # Query throughput through the real service path (embedding, both engines, metadata).
        latencies = []
        for qid in query_ids[:200]:
            t0 = time.perf_counter()
            services.search.search(
                DEFAULT_WORKSPACE_ID, data.queries[qid], SearchOptions(limit=10, min_score=0.0)
            )
            latencies.append((time.perf_counter() - t0) * 1000)
        services.close()

    report: dict = {
        name: {
            metric: round(statistics.fmean(values), 4) if values else 0.0
            for metric, values in m.items()
        }
        for name, m in scores.items()
    }
    default_name = (
        "keyword"
        if settings.fusion == "keyword"
        else "vector"
        if settings.fusion == "vector"
        else (
            f"convex(w={settings.vector_weight:g})"
            if settings.fusion == "convex"
            else settings.fusion
        )
    )
    report["default"] = dict(report[default_name], method=default_name)
    latencies.sort()
    report["meta"] = {
        "dataset": Path(directory).name,
        "embedder": services.embedder.name if services.embedder else "none",
        "documents": len(data.corpus),
        "chunks": chunks,
        "queries": len(query_ids),
        "index_seconds": round(index_seconds, 2),
        "docs_per_second": round(len(data.corpus) / index_seconds, 1),
        "chunks_per_second": round(chunks / index_seconds, 1),
        "query_p50_ms": round(latencies[len(latencies) // 2], 2) if latencies else None,
        "query_p95_ms": round(latencies[int(len(latencies) * 0.95)], 2) if latencies else None,
    }
    return report


def format_table(report: dict) -> str:
    meta = report["meta"]
    lines = [
        f"dataset {meta['dataset']}  embedder {meta['embedder']}  "
        f"{meta['documents']} docs / {meta['chunks']} chunks / {meta['queries']} queries",
        f"{'method':<16}{'nDCG@10':>9}{'R@100':>8}{'MRR@10':>8}",
    ]
    for name, m in report.items():
        if name == "meta":
            continue
        label = f"default={m['method']}" if name == "default" else name
        lines.append(f"{label:<16}{m['ndcg@10']:>9.4f}{m['recall@100']:>8.4f}{m['mrr@10']:>8.4f}")
    lines.append(
        f"indexing {meta['index_seconds']} s ({meta['docs_per_second']} docs/s, "
        f"{meta['chunks_per_second']} chunks/s); query p50 {meta['query_p50_ms']} ms, "
        f"p95 {meta['query_p95_ms']} ms"
    )
    return "\n".join(lines)
