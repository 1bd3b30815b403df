"""Ranking metrics on one query: a ranked list of doc ids against graded judgements.

Defined as trec_eval defines them (linear gain, log2 discount; relevant means grade > 0), so
the figures compare with published BEIR results; tests check them against ir-measures.
"""

from __future__ import annotations

import math

# The metrics `bunko eval` reports, by their names in its JSON output.
METRIC_NAMES = ("ndcg@10", "recall@100", "mrr@10")


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


def score(ranked: list[str], relevant: dict[str, int]) -> dict[str, float]:
    """Every reported metric for one query, keyed as in METRIC_NAMES."""
    return {
        "ndcg@10": ndcg_at(ranked, relevant),
        "recall@100": recall_at(ranked, relevant),
        "mrr@10": mrr_at(ranked, relevant),
    }
