"""`bunko eval`'s pieces: the BEIR loader, and its metrics against ir-measures (trec_eval)."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from bunko.evaluation import load_beir
from bunko.evaluation.metrics import METRIC_NAMES, mrr_at, ndcg_at, recall_at, score
from bunko.evaluation.report import format_table, summarise

TINY = Path(__file__).resolve().parents[1] / "data" / "beir_tiny"


def test_load_beir_joins_titles_skips_the_header_and_unjudged_queries():
    data = load_beir(TINY)
    assert data.corpus["d1"] == "Tea kettles\n\nA kettle boils water for tea on the stove."
    assert data.corpus["d4"].startswith("Tyres")  # no title, no blank line
    assert sorted(data.queries) == ["q1", "q2", "q3", "q4"]  # q5 has no judgements
    assert data.qrels["q1"] == {"d1": 2, "d2": 1}


def test_metrics_by_hand():
    relevant = {"a": 2, "b": 1, "x": 0}
    assert ndcg_at(["a", "b"], relevant) == 1.0
    assert ndcg_at(["b", "a"], relevant) == pytest.approx((1 + 2 / 1.5849625) / (2 + 1 / 1.5849625))
    assert recall_at(["x", "b"], relevant) == 0.5
    assert mrr_at(["x", "y", "b"], relevant) == pytest.approx(1 / 3)
    assert score([], relevant) == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    assert score(["a"], {"x": 0}) == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}


def _fixture(seed: int = 8) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """Graded judgements and rankings long enough to test the @100 cut-off, with unjudged
    documents, judged-irrelevant ones, and a query whose ranking finds nothing relevant."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(300)]
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, list[str]] = {}
    for q in range(40):
        qid = f"q{q}"
        judged = rng.sample(docs, rng.randint(1, 30))
        qrels[qid] = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        qrels[qid][judged[0]] = max(1, qrels[qid][judged[0]])  # at least one relevant
        ranked = rng.sample(docs, rng.randint(1, 250))
        for d in judged[: rng.randint(0, 5)]:  # some judged documents near the top
            if d in ranked:
                ranked.remove(d)
            ranked.insert(rng.randint(0, min(12, len(ranked))), d)
        runs[qid] = ranked
    runs["q0"] = [d for d in docs if qrels["q0"].get(d, 0) == 0][:120]
    return qrels, runs


def test_metrics_agree_with_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, R, nDCG

    qrels, runs = _fixture()
    theirs_by_query: dict[tuple[str, str], float] = {}
    names = {str(nDCG @ 10): "ndcg@10", str(R @ 100): "recall@100", str(RR @ 10): "mrr@10"}
    for m in ir_measures.iter_calc(
        [nDCG @ 10, R @ 100, RR @ 10],
        [ir_measures.Qrel(q, d, g) for q, judged in qrels.items() for d, g in judged.items()],
        # Strictly falling scores: trec_eval ranks by score, so the order is ours exactly.
        [
            ir_measures.ScoredDoc(q, d, float(len(r) - i))
            for q, r in runs.items()
            for i, d in enumerate(r)
        ],
    ):
        theirs_by_query[(m.query_id, names[str(m.measure)])] = m.value
    ours = {q: score(runs[q], qrels[q]) for q in qrels}
    for q, values in ours.items():
        for metric in METRIC_NAMES:
            assert values[metric] == pytest.approx(theirs_by_query[(q, metric)], abs=1e-9)
    for metric in METRIC_NAMES:
        mean = statistics.fmean(ours[q][metric] for q in ours)
        theirs = statistics.fmean(theirs_by_query[(q, metric)] for q in ours)
        assert mean == pytest.approx(theirs, abs=1e-12)


def test_report_means_default_and_table():
    scores = {
        "keyword": {"ndcg@10": [1.0, 0.5], "recall@100": [1.0, 1.0], "mrr@10": [1.0, 0.25]},
        "rrf": {"ndcg@10": [], "recall@100": [], "mrr@10": []},
    }
    meta = {
        "dataset": "t",
        "embedder": "none",
        "documents": 2,
        "chunks": 2,
        "queries": 2,
        "index_seconds": 1.0,
        "docs_per_second": 2.0,
        "chunks_per_second": 2.0,
        "query_p50_ms": 1.0,
        "query_p95_ms": 2.0,
    }
    report = summarise(scores, default_name="keyword", meta=meta)
    assert list(report) == ["keyword", "rrf", "default", "meta"]
    assert report["keyword"] == {"ndcg@10": 0.75, "recall@100": 1.0, "mrr@10": 0.625}
    assert report["rrf"] == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    assert report["default"] == {**report["keyword"], "method": "keyword"}
    table = format_table(report).splitlines()
    assert table[2] == "keyword            0.7500  1.0000  0.6250"
    assert table[4].startswith("default=keyword")
