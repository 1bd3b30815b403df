"""The relevance gate: each fused hit's calibrated similarity, which `min_score` cuts.

The background coverage (services/search/background_terms.py) is computed here, in the core, from
the text of the best GATE_WINDOW candidates by fused rank and the best KEYWORD_WINDOW by
keyword coverage, read in one batch (the same chunks
materialising the page reads next, so they are handed on, not read twice): both engines are
judged by one analysis of the text, so local and cloud refuse alike. A candidate past the
window is judged without it (its cosine and engine coverage alone): a page of results is the
best few candidates, and the window holds several times a default page.
"""

from __future__ import annotations

from collections.abc import Sequence

from bunko.domain import Chunk, Document, DocumentStatus
from bunko.ports import MetadataStore
from bunko.services.search.background_terms import text_coverage, weighted_terms
from bunko.services.search.calibration import CALIBRATIONS, Calibration
from bunko.services.search.fusion import FusedHit
from bunko.services.search.search_items import fetch_documents

GATE_WINDOW = 40
# ... and the best candidates by keyword coverage, wherever fusion put them: a query whose
# weight moved to the vectors (services/search/fusion.py) still has its keyword matches judged.
KEYWORD_WINDOW = 20


def similarities(
    metadata: MetadataStore,
    workspace_id: str,
    query: str,
    fused: Sequence[FusedHit],
    calibration: Calibration,
    min_score: float,
    *,
    limit: int,
    chunks: dict[str, Chunk],
    documents: dict[str, Document | None],
) -> dict[str, float]:
    """Chunk id → similarity for every fused hit. Fills `chunks` with the window's chunks
    and `documents` with those it had to read. A chunk whose document is still `indexing`
    has no vector yet: its cosine is missing, not low, so its keywords alone decide."""
    window = list(fused[: max(GATE_WINDOW, 4 * limit)])
    seen = {h.chunk_id for h in window}
    by_keywords = sorted((h for h in fused if h.coverage > 0), key=lambda h: -h.coverage)
    window += [h for h in by_keywords[:KEYWORD_WINDOW] if h.chunk_id not in seen]
    if window:
        chunks.update((c.id, c) for c in metadata.get_chunks_by_ids(
            workspace_id, [h.chunk_id for h in window if h.chunk_id not in chunks]
        ))  # fmt: skip
    terms = weighted_terms(query)
    background = {
        h.chunk_id: text_coverage(terms, chunks[h.chunk_id].content)
        for h in window
        if h.chunk_id in chunks
    }
    keyword_only = CALIBRATIONS["keyword"]
    found: dict[str, float] = {}
    unsure: list[tuple[FusedHit, float]] = []  # scored by keywords alone, if indexing
    for hit in fused:
        bg = background.get(hit.chunk_id, 0.0)
        found[hit.chunk_id] = score = calibration.similarity(hit.vector_score, hit.coverage, bg)
        if score < min_score and hit.engines == ("keyword",):
            alone = keyword_only.similarity(0.0, hit.coverage, bg)
            if alone >= min_score:
                unsure.append((hit, alone))
    fetch_documents(metadata, workspace_id, [h.document_id for h, _ in unsure], documents)
    for hit, alone in unsure:
        doc = documents[hit.document_id]
        if doc is not None and doc.status is DocumentStatus.INDEXING:
            found[hit.chunk_id] = alone
    return found
