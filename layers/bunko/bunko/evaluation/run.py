"""Run an evaluation: ingest a BEIR corpus into a throw-away data folder, rank every query.

Every test query runs both engines once, and each fusion method ranks the same candidates,
so the methods are compared on equal terms. Query latency is measured separately, through
the real search service (embedding, both engines, metadata).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.evaluation import abstention, answers, libraries
from bunko.evaluation.beir import BeirSet, load_beir
from bunko.evaluation.metrics import METRIC_NAMES, score
from bunko.evaluation.reliability import reliability
from bunko.evaluation.report import empty_scores, summarise
from bunko.ports import Embedder, SearchFilter, TrainableEmbedder
from bunko.services.search import SearchOptions, fuse, query_vector_weight, vector_weight_for

if TYPE_CHECKING:
    from bunko.bootstrap import Services
    from bunko.bootstrap.scratch import CollectingQueue

CANDIDATES = 200
CONVEX_WEIGHTS = (0.1, 0.2, 0.3, 0.5, 0.7)
INDEX_BATCH = 256
LATENCY_QUERIES = 200
SHOWN = 100  # hits read per question for the shown list's metrics (recall@100)


def fusion_methods(default_weight: float) -> dict[str, dict]:
    """The fusion methods compared, by report name: each engine alone, max, RRF, convex."""
    methods: dict[str, dict] = {
        "keyword": {"method": "keyword"},
        "vector": {"method": "vector"},
        "max": {"method": "max"},
        "rrf": {"method": "rrf"},
    }
    for w in sorted({*CONVEX_WEIGHTS, default_weight}):
        methods[f"convex(w={w:g})"] = {"method": "convex", "vector_weight": w}
    # what search does: convex with the weight adapted to the query (fusion.query_vector_weight)
    methods[f"adaptive(w={default_weight:g})"] = {
        "method": "convex",
        "vector_weight": default_weight,
        "adaptive": True,
    }
    return methods


def default_method(settings: Settings, embedder: Embedder | None) -> str:
    """The report name of the fusion the settings configure for this embedding model."""
    if settings.fusion == "convex":
        return f"adaptive(w={vector_weight_for(embedder, settings.vector_weight):g})"
    return settings.fusion


def run_evaluation(
    directory: Path,
    *,
    embedder: str | None = None,
    max_queries: int | None = None,
    vector_weight: float | None = None,
    progress: bool = True,
) -> dict:
    """The report `bunko eval` prints: means per fusion method, the default, run facts."""
    from bunko.bootstrap.scratch import scratch_services

    data = load_beir(Path(directory))
    query_ids = sorted(data.queries)[:max_queries] if max_queries else sorted(data.queries)
    overrides: dict[str, Any] = {}
    if embedder:
        overrides["embedder"] = embedder
    if vector_weight is not None:
        overrides["vector_weight"] = vector_weight
    with scratch_services(**overrides) as (services, queue):
        settings = services.settings
        started = time.perf_counter()
        path_of = _index(services, queue, data, progress=progress)
        index_seconds = time.perf_counter() - started
        chunks = services.metadata.count_chunks()
        methods = fusion_methods(vector_weight_for(services.embedder, settings.vector_weight))
        scores = _rank(services, data, query_ids, methods, path_of, progress=progress)
        latencies = _latencies(services, data, query_ids[:LATENCY_QUERIES])
        answerable = {
            q: (data.queries[q], {d for d, r in data.qrels[q].items() if r > 0}) for q in query_ids
        }
        unanswerable = abstention.unanswerable_queries(Path(directory))
        abstained = abstention.evaluate(
            services.search,
            DEFAULT_WORKSPACE_ID,
            answerable,
            path_of,
            unanswerable,
            min_score=settings.min_score,
        )
        pairs: list[tuple[float, bool]] = []  # (similarity, relevant) of every hit shown
        shown = _shown(services, data, query_ids, path_of, unanswerable, pairs)
        gold = answers.load_answers(Path(directory))
        small = measure_libraries(
            services, queue, data, gold, min_score=settings.min_score, pairs=pairs
        )
        answered = None
        if gold is not None:  # the set ships gold answers: measure what chat answers too
            questions = {q: answerable[q] for q in query_ids if q in gold}
            answered = answers.evaluate_answers(
                services.chat, DEFAULT_WORKSPACE_ID, questions, gold, path_of, unanswerable
            )
    meta = {
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
    scores["shown"] = shown
    report = summarise(scores, default_name=default_method(settings, services.embedder), meta=meta)
    report["abstention"] = abstained
    report["reliability"] = reliability(pairs, min_score=settings.min_score)
    report["libraries"] = small
    if answered is not None:
        report["answers"] = answered
    return report


def _index(services: Services, queue: CollectingQueue, data: BeirSet, *, progress: bool) -> dict:
    """Ingest the corpus; returns Bunko document id -> BEIR doc id."""
    from tqdm import tqdm

    path_of = {}
    for doc_id, text in data.corpus.items():
        doc = services.ingest.submit_text(
            DEFAULT_WORKSPACE_ID, path=f"{doc_id}.txt", content=text or "(empty)"
        )
        path_of[doc.id] = doc_id
    jobs = queue.take()
    with tqdm(total=len(jobs), desc="indexing", unit="doc", disable=not progress) as bar:
        embedder = services.embedder
        if isinstance(embedder, TrainableEmbedder) and not embedder.is_fitted:
            embedder.fit(list(data.corpus.values()))  # LSA learns from the corpus itself
        for i in range(0, len(jobs), INDEX_BATCH):
            services.pipeline.process(jobs[i : i + INDEX_BATCH])
            bar.update(min(INDEX_BATCH, len(jobs) - i))
    return path_of


def measure_libraries(
    services: Services,
    queue: CollectingQueue,
    data: BeirSet,
    gold: dict[str, list[str]] | None,
    *,
    min_score: float,
    pairs: list[tuple[float, bool]] | None = None,
) -> dict[str, dict]:
    """Kept and refused on seeded libraries of one and ten documents, and on same-topic
    libraries where the set has gold answers (evaluation.libraries), each in a workspace of
    its own beside the whole corpus's, by library size ("1", "10", "same-topic"). `pairs`
    gains (similarity, relevant) of each question's top hits at min_score 0."""
    drawn = {
        str(size): libraries.draw_libraries(data, size, n) for size, n in libraries.DRAWS.items()
    }
    if gold is not None:
        drawn[libraries.SAME_TOPIC] = libraries.draw_same_topic(data, gold)
    id_of: dict[str, str] = {}  # Bunko document id -> the set's id
    for library in (lib for libs in drawn.values() for lib in libs):
        for doc_id in library.documents:
            doc = services.ingest.submit_text(
                library.workspace_id, path=f"{doc_id}.txt", content=data.corpus[doc_id] or "-"
            )
            id_of[doc.id] = doc_id
    jobs = queue.take()
    for i in range(0, len(jobs), INDEX_BATCH):
        services.pipeline.process(jobs[i : i + INDEX_BATCH])

    def found(workspace_id: str, question: str) -> list[str]:
        options = SearchOptions(limit=libraries.RESULT_LIMIT, min_score=min_score)
        items = services.search.search(workspace_id, question, options).items
        return [id_of[item.document_id] for item in items]

    if pairs is not None:
        options = SearchOptions(limit=libraries.RESULT_LIMIT, min_score=0.0)
        for library in (lib for libs in drawn.values() for lib in libs):
            asked = [*library.answerable, *((q, set()) for q in library.unanswerable)]
            for question, relevant in asked:
                items = services.search.search(library.workspace_id, question, options).items
                pairs.extend((i.similarity, id_of[i.document_id] in relevant) for i in items)
    return {size: libraries.measure(libs, found) for size, libs in drawn.items() if libs}


def _shown(
    services: Services,
    data: BeirSet,
    query_ids: list[str],
    path_of: dict[str, str],
    unanswerable: dict[str, list[str]],
    pairs: list[tuple[float, bool]],
) -> dict[str, list[float]]:
    """The ranking metrics of the list search shows (sorted by similarity, at min_score 0),
    per query; `pairs` gains (similarity, relevant) of every hit in the top ten, and of the
    unanswerable questions' hits."""
    shown: dict[str, list[float]] = {metric: [] for metric in METRIC_NAMES}
    options = SearchOptions(limit=SHOWN, min_score=0.0)
    for qid in query_ids:
        items = services.search.search(DEFAULT_WORKSPACE_ID, data.queries[qid], options).items
        ranked = list(dict.fromkeys(path_of[i.document_id] for i in items))
        for metric, value in score(ranked, data.qrels[qid]).items():
            shown[metric].append(value)
        relevant = {d for d, r in data.qrels[qid].items() if r > 0}
        pairs.extend((i.similarity, path_of[i.document_id] in relevant) for i in items[:10])
    for questions in unanswerable.values():
        for question in questions:
            items = services.search.search(DEFAULT_WORKSPACE_ID, question, options).items
            pairs.extend((i.similarity, False) for i in items[:10])
    return shown


def _rank(
    services: Services,
    data: BeirSet,
    query_ids: list[str],
    methods: dict[str, dict],
    path_of: dict[str, str],
    *,
    progress: bool,
) -> dict[str, dict[str, list[float]]]:
    """Per method and metric, the score of every query (BEIR doc ids, first chunk counts)."""
    from tqdm import tqdm

    scores = empty_scores(list(methods))
    filters = SearchFilter(workspace_id=DEFAULT_WORKSPACE_ID)
    scale = services.search.calibration_for(vector_used=True, method="convex").scale
    for qid in tqdm(query_ids, desc="querying", unit="query", disable=not progress):
        query = data.queries[qid]
        vector = services.search.query_vector(query)
        keyword_hits, vector_hits = services.index.hybrid_search(query, vector, filters, CANDIDATES)
        weight = services.index.keyword_weight(query, filters) if keyword_hits else 0.0
        for name, spec in methods.items():
            vector_weight = spec.get("vector_weight", 0.3)
            if spec.get("adaptive"):
                vector_weight = query_vector_weight(
                    vector_weight, keyword_hits, vector_hits, weight, scale
                )
            hits = fuse(
                keyword_hits, vector_hits, method=spec["method"], vector_weight=vector_weight
            )
            ranked = list(dict.fromkeys(path_of[hit.document_id] for hit in hits))
            for metric, value in score(ranked, data.qrels[qid]).items():
                scores[name][metric].append(value)
    return scores


def _latencies(services: Services, data: BeirSet, query_ids: list[str]) -> list[float]:
    """Sorted milliseconds per query through the search service."""
    latencies = []
    for qid in query_ids:
        t0 = time.perf_counter()
        services.search.search(
            DEFAULT_WORKSPACE_ID, data.queries[qid], SearchOptions(limit=10, min_score=0.0)
        )
        latencies.append((time.perf_counter() - t0) * 1000)
    return sorted(latencies)
