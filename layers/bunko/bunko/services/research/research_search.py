"""Search inside one sealed corpus: the same hybrid ranking as normal search (the search
service's query embedding, fusion method and weight), over the corpus's own passages only.

Keyword statistics are the corpus's own, so ingesting, editing or deleting documents
elsewhere never changes a corpus's ranking: the same query gives the same hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bunko.domain.research import CorpusPassage
from bunko.ports import Embedder, IndexHit, PassageScorer
from bunko.services.search import (
    SearchService,
    for_question,
    fuse,
    gate_window,
    read_window,
    row_for,
    shown_order,
    vector_weight_for,
)


@dataclass(frozen=True)
class CorpusHit:
    evidence_id: str  # what to cite, with `revision`
    revision: int
    document_id: str
    chunk_id: str
    chunk_index: int
    content: str
    start: int
    end: int
    page: int | None
    similarity: float
    vector_score: float
    text_score: float


def rank_passages(
    passages: Sequence[CorpusPassage],
    query: str,
    *,
    search: SearchService,
    scorer: PassageScorer,
    limit: int,
    min_score: float,
    embedder: Embedder | None = None,
) -> tuple[list[CorpusHit], bool]:
    """Best first; one hit per passage. Returns (hits, whether the vector half ran).
    `embedder`: the model serving the workspace (default: the server's)."""
    embedder = embedder or search.generations.default.embedder
    first: dict[str, CorpusPassage] = {}
    for cp in passages:
        first.setdefault(cp.passage.chunk_id, cp)  # a chunk sealed twice cites its first evidence
    unique = list(first.values())
    if not unique or not query.strip() or limit <= 0:
        return [], False
    fetch = max(search.candidates, limit * 4)
    texts = [cp.passage.content for cp in unique]
    scored, weight = scorer.keyword_scores(query, texts, fetch)
    keyword = [
        IndexHit(unique[i].passage.chunk_id, unique[i].passage.document_id, score)
        for i, score in scored
    ]
    vector = (
        _vector_hits(unique, query, search, embedder, fetch) if search.method != "keyword" else []
    )
    if search.method == "vector":
        keyword = []
    weight = weight if keyword else 0.0
    fused = fuse(
        keyword,
        vector,
        method=search.method,
        vector_weight=vector_weight_for(embedder, search.vector_weight),
        keyword_weight=weight,
    )
    # Cut and sorted by the calibrated similarity: exactly as normal search does.
    calibration = row_for(
        query,
        search.calibration_for(vector_used=bool(vector), method=search.method, embedder=embedder),
        search.claim_rows,
    )
    by_chunk = {cp.passage.chunk_id: cp for cp in unique}
    signals, outside = read_window(
        query,
        {h.chunk_id: by_chunk[h.chunk_id].passage.content for h in gate_window(fused, limit)},
        {},  # a sealed passage keeps no document name; its headings still count
        calibration,
    )
    calibration = for_question(calibration, query, outside)
    scores = {
        h.chunk_id: signals.get(h.chunk_id, outside).similarity(calibration, h) for h in fused
    }
    passed = shown_order([h for h in fused if scores[h.chunk_id] >= min_score], scores)
    hits: list[CorpusHit] = []
    for hit in passed:
        similarity = scores[hit.chunk_id]
        if len(hits) >= limit:
            break
        cp = by_chunk[hit.chunk_id]
        p = cp.passage
        hits.append(
            CorpusHit(
                evidence_id=cp.evidence_id,
                revision=p.revision,
                document_id=p.document_id,
                chunk_id=p.chunk_id,
                chunk_index=p.index,
                content=p.content,
                start=p.start,
                end=p.end,
                page=p.page,
                similarity=round(similarity, 6),
                vector_score=round(hit.vector_score, 6),
                text_score=round(hit.coverage, 6),
            )
        )
    return hits, bool(vector)


def _vector_hits(
    passages: Sequence[CorpusPassage],
    query: str,
    search: SearchService,
    embedder: Embedder | None,
    fetch: int,
) -> list[IndexHit]:
    if embedder is None:
        return []
    usable = [cp for cp in passages if cp.passage.vector and cp.passage.embedder == embedder.name]
    if not usable:
        return []  # sealed keyword-only, or under another model: the keyword half ranks alone
    query_vector = search.query_vector(query, embedder)
    if query_vector is None:
        return []
    matrix = np.vstack([np.frombuffer(cp.passage.vector or b"", dtype="<f4") for cp in usable])
    if matrix.shape[1] != query_vector.shape[0]:
        return []
    scores = matrix @ query_vector
    order = np.argsort(-scores, kind="stable")[:fetch]
    return [
        IndexHit(usable[i].passage.chunk_id, usable[i].passage.document_id, float(scores[i]))
        for i in order.tolist()
    ]
