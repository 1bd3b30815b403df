"""The calibrated `similarity` (DESIGN decision 8): one number that means the same thing for
every query and corpus, so one `min_score` refuses an unrelated query everywhere.

Fusion ranks by rank-relative scores (the best candidate always scores near 1), which says
nothing about whether anything is relevant at all. The similarity a hit reports is instead
a logistic estimate of P(relevant) from two absolute signals:

- `cosine`: the vector cosine of query and chunk (0 when the vector engine did not return it),
- `coverage`: the chunk's BM25 divided by the query's keyword weight, the engine's Σ idf of
  the query's terms (SearchIndex.keyword_weight), clipped to [0, 1]: an IDF-weighted share of
  the query's terms the chunk holds. A word in no chunk weighs most, so nonsense cannot
  reach a high coverage by matching one common word.

    similarity = 1 / (1 + exp(-(a·cosine + b·coverage + c·cosine·coverage + d)))

A cosine's scale depends on the model, so each embedding model has its own row, fitted with
class-balanced logistic regression on the top-10 candidates of SciFact and JSQuAD-valid
queries (relevant = in the qrels), the other set's queries and random strings (not relevant):
`tests/bench/fit_calibration.py`. At the default min_score 0.3 the rows were checked to keep
≥ 0.97 of the answerable queries' relevant documents and refuse ≥ 0.95 of unanswerable
queries (`bunko eval` measures both). A model without a fitted row (Bedrock, an
OpenAI-compatible endpoint) is calibrated by keyword coverage alone, as if it had no vectors,
because its cosines are on an unknown scale: its semantic-only hits then fall below
min_score, which errs towards "nothing relevant".
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Calibration:
    cosine: float
    coverage: float
    product: float
    bias: float

    def similarity(self, cosine: float, coverage: float) -> float:
        z = self.cosine * cosine + self.coverage * coverage + self.product * cosine * coverage
        z += self.bias
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


# Keyed by the start of the embedder's `name`; "keyword" serves keyword-only search and any
# model without a row of its own.
CALIBRATIONS: dict[str, Calibration] = {
    "keyword": Calibration(cosine=0.0, coverage=9.2025, product=0.0, bias=-3.7567),
    "use-multilingual-v3": Calibration(
        cosine=1.4041, coverage=8.7706, product=0.2607, bias=-4.0836
    ),
    # e5: a balanced logistic fit keeps only 0.89 of SciFact's answerable queries at 0.3 (its
    # relevant abstracts often share few query words). Chosen instead on whole-corpus records at
    # e5's weight (tests/bench/bench_refine.py --records) by a grid over the coefficients: the
    # row with the most kept on both sets while refusing >= 0.95 (docs/relevance.md).
    "multilingual-e5-small": Calibration(cosine=2.3722, coverage=12.0, product=0.0, bias=-5.0),
}


# Vector-only search (method "vector", aurak's enableFullTextSearch off) has no coverage, so
# it gets a cosine-only row, fitted the same way. It separates less well: on the eval sets at
# 0.3 it kept 0.93–0.94 of answerable queries and refused 0.82–0.84 of the other language's
# queries (0.99 of random strings).
VECTOR_ONLY: dict[str, Calibration] = {
    "use-multilingual-v3": Calibration(cosine=11.384, coverage=0.0, product=0.0, bias=-4.1755),
    # e5's cosines crowd into a narrow band (relevant ~0.83-0.95, unrelated ~0.74-0.83).
    "multilingual-e5-small": Calibration(cosine=42.3889, coverage=0.0, product=0.0, bias=-36.8068),
}


class RawCosine:
    """Vector-only search with a model that has no fitted row: the cosine itself (as before
    calibration), since its scale is unknown and refusing everything would be worse."""

    def similarity(self, cosine: float, coverage: float) -> float:
        return min(1.0, max(0.0, cosine))


def vector_only_calibration(embedder_name: str | None) -> Calibration | RawCosine:
    for prefix, row in VECTOR_ONLY.items():
        if embedder_name and embedder_name.startswith(prefix):
            return row
    return RawCosine()


def calibration_for(embedder_name: str | None) -> Calibration:
    """The fitted row for this embedding model, or the keyword-only row."""
    if embedder_name:
        for prefix, row in CALIBRATIONS.items():
            if embedder_name.startswith(prefix):
                return row
    return CALIBRATIONS["keyword"]
