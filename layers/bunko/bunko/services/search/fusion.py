"""Hybrid fusion in the core (DESIGN decision 4): one function ranks both engines' hits.

Every method returns, per chunk, a fused score in [0, 1] plus the two normalised component
scores, so local and cloud engines rank alike and `similarity` always means the same thing.

- vector_score: cosine similarity clipped to [0, 1] (vectors are L2-normalised).
- text_score:   BM25 divided by the best BM25 of the query's candidates (so in [0, 1]).
- coverage:     BM25 divided by the query's keyword weight (the engine's Σ idf of its terms),
                clipped to [0, 1]: an absolute, IDF-weighted query-term coverage. With the
                cosine it feeds the calibrated `similarity` (services/search/calibration.py); the
                rank-relative scores above only rank.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bunko.ports import Embedder, IndexHit
from bunko.services.search.calibration import ModelScale

FUSION_METHODS = ("convex", "rrf", "max", "keyword", "vector")
RRF_K = 60
# Convex fusion's vector weight per embedding model (keyed by the start of the embedder's
# name), where `bunko eval` measured another weight best on SciFact and JSQuAD-valid; every
# other model (and keyword-only search) gets DEFAULT_VECTOR_WEIGHT. A stronger model's cosine
# deserves more of the say: e5's dense nDCG@10 is 0.66 / 0.90 against USE's 0.42 / 0.77.
DEFAULT_VECTOR_WEIGHT = 0.3
MODEL_VECTOR_WEIGHTS = {"multilingual-e5-small": 0.5}


def vector_weight_for(embedder: Embedder | None, configured: float | None = None) -> float:
    """The convex vector weight for queries `embedder` embeds: `configured`
    (BUNKO_VECTOR_WEIGHT) if set, else the model's measured one."""
    if configured is not None:
        return configured
    for prefix, weight in MODEL_VECTOR_WEIGHTS.items():
        if embedder is not None and embedder.name.startswith(prefix):
            return weight
    return DEFAULT_VECTOR_WEIGHT


# The query-dependent weight: when the query's words are absent from the library (a question
# in another language than the documents), BM25 ranks noise and the vector leg should lead.
# The best keyword candidate's coverage tells: monolingual questions' best is above 0.45 for
# 90% of xquad-dev/en, JSQuAD and SciFact questions, cross-lingual (xquad-dev/de) below 0.25
# for 75%. From KEYWORD_SURE down to KEYWORD_ABSENT the weight moves to the vector leg; the
# pair was chosen among seven by nDCG@10 on those sets (docs/relevance.md): the only one that
# lowers none of the monolingual sets.
KEYWORD_SURE = 0.3
KEYWORD_ABSENT = 0.1


def adapted_vector_weight(
    weight: float,
    keyword: Sequence[IndexHit],
    keyword_weight: float,
    vector_confidence: float = 1.0,
) -> float:
    """Convex fusion's vector weight for this query: `weight` when its best keyword hit
    covers the query (coverage ≥ KEYWORD_SURE), rising linearly towards 1 (vectors alone)
    as that coverage falls to KEYWORD_ABSENT, and only as far as `vector_confidence` (in
    [0, 1]) lets it: a model that does not read the query's language scores every passage
    low, and its ranking is no better than the few words that match."""
    best = max((_coverage(h.score, keyword_weight) for h in keyword), default=0.0)
    absent = min(1.0, max(0.0, (KEYWORD_SURE - best) / (KEYWORD_SURE - KEYWORD_ABSENT)))
    return weight + (1.0 - weight) * absent * min(1.0, max(0.0, vector_confidence))


def vector_confidence(scaled_top_cosine: float) -> float:
    """How far the vector leg may lead: its best hit's cosine on the model's scale
    (services/calibration.ModelScale), full at half a translation's. Chosen on xquad-dev's
    eight languages (docs/relevance.md): German 0.893 nDCG@10 (0.895 without it), Greek 0.349
    (0.234 without, 0.357 at the fixed weight)."""
    return min(1.0, max(0.0, scaled_top_cosine / CONFIDENT_COSINE))


CONFIDENT_COSINE = 0.5


def query_vector_weight(
    weight: float,
    keyword: Sequence[IndexHit],
    vector: Sequence[IndexHit],
    keyword_weight: float,
    scale: ModelScale,
) -> float:
    """The convex weight search uses for this query's hits: `weight` adapted to how much
    of the query the keywords cover, as far as the vectors (on the model's `scale`) are
    confident. Search, `bunko eval` and the calibration fit all rank with it."""
    if not vector:
        return weight
    confidence = vector_confidence(scale.scaled(max(h.score for h in vector)))
    return adapted_vector_weight(weight, keyword, keyword_weight, confidence)


@dataclass(frozen=True)
class FusedHit:
    chunk_id: str
    document_id: str
    score: float
    vector_score: float
    text_score: float
    coverage: float = 0.0
    engines: tuple[str, ...] = ()  # the engines whose candidates held this chunk


def _component_scores(
    keyword: Sequence[IndexHit], vector: Sequence[IndexHit]
) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    best = max((h.score for h in keyword), default=0.0)
    text = {h.chunk_id: (h.score / best if best > 0 else 0.0) for h in keyword}
    vec = {h.chunk_id: min(1.0, max(0.0, h.score)) for h in vector}
    documents = {h.chunk_id: h.document_id for h in (*keyword, *vector)}
    return text, vec, documents


def _coverage(score: float, weight: float) -> float:
    return min(1.0, max(0.0, score / weight)) if weight > 0 else 0.0


def _minmax(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi - lo <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def _ranks(hits: Sequence[IndexHit]) -> dict[str, int]:
    order = sorted(hits, key=lambda h: -h.score)
    return {h.chunk_id: rank for rank, h in enumerate(order, start=1)}


def fuse(
    keyword: Sequence[IndexHit],
    vector: Sequence[IndexHit],
    *,
    method: str = "convex",
    vector_weight: float = DEFAULT_VECTOR_WEIGHT,
    keyword_weight: float = 0.0,
) -> list[FusedHit]:
    """Fuse keyword (BM25) and vector (cosine) hits; best first.

    convex:  vector_weight * minmax(vector) + (1 - vector_weight) * minmax(text); a chunk
             missing from one list scores 0 there.
    rrf:     reciprocal rank fusion (k=60), scaled by its maximum 2/(k+1) into [0, 1].
    max:     TelosDB's rule, max(vector_score, text_score).
    keyword / vector: one engine alone.
    `keyword_weight` (SearchIndex.keyword_weight of the query) turns BM25 into `coverage`.
    """
    if method not in FUSION_METHODS:
        raise ValueError(f"unknown fusion method {method!r}; choose one of {FUSION_METHODS}")
    text, vec, documents = _component_scores(keyword, vector)
    bm25 = {h.chunk_id: h.score for h in keyword}
    scorer = _SCORERS[method]
    fused = scorer(keyword, vector, text, vec, vector_weight)
    hits = [
        FusedHit(
            chunk_id=cid,
            document_id=documents[cid],
            score=min(1.0, max(0.0, score)),
            vector_score=vec.get(cid, 0.0),
            text_score=text.get(cid, 0.0),
            coverage=_coverage(bm25.get(cid, 0.0), keyword_weight),
            engines=("keyword",) * (cid in text) + ("vector",) * (cid in vec),
        )
        for cid, score in fused.items()
    ]
    hits.sort(key=lambda h: (-h.score, -h.text_score, -h.vector_score, h.chunk_id))
    return hits


def _convex(keyword, vector, text, vec, weight) -> dict[str, float]:
    if not vector:
        weight = 0.0
    elif not keyword:
        weight = 1.0
    t, v = _minmax(text), _minmax(vec)
    return {cid: weight * v.get(cid, 0.0) + (1 - weight) * t.get(cid, 0.0) for cid in {*t, *v}}


def _rrf(keyword, vector, text, vec, weight) -> dict[str, float]:
    lists = [r for r in (_ranks(keyword), _ranks(vector)) if r]
    if not lists:
        return {}
    top = len(lists) / (RRF_K + 1)
    ids = {cid for ranks in lists for cid in ranks}
    return {
        cid: sum(1 / (RRF_K + ranks[cid]) for ranks in lists if cid in ranks) / top for cid in ids
    }


def _max(keyword, vector, text, vec, weight) -> dict[str, float]:
    return {cid: max(text.get(cid, 0.0), vec.get(cid, 0.0)) for cid in {*text, *vec}}


def _keyword(keyword, vector, text, vec, weight) -> dict[str, float]:
    return dict(text)


def _vector(keyword, vector, text, vec, weight) -> dict[str, float]:
    return dict(vec)


_SCORERS: dict[str, Callable[..., dict[str, float]]] = {
    "convex": _convex,
    "rrf": _rrf,
    "max": _max,
    "keyword": _keyword,
    "vector": _vector,
}
