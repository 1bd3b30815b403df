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

from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass

from bunko.domain import Chunk, Document, DocumentStatus
from bunko.ports import MetadataStore
from bunko.services.search.background_terms import text_coverage, weighted_terms
from bunko.services.search.calibration import CALIBRATIONS, Calibration
from bunko.services.search.evidence import Evidence, evidence
from bunko.services.search.fusion import FusedHit
from bunko.services.search.search_items import fetch_documents

GATE_WINDOW = 40
# ... and the best candidates by keyword coverage, wherever fusion put them: a query whose
# weight moved to the vectors (services/search/fusion.py) still has its keyword matches judged.
KEYWORD_WINDOW = 20


@dataclass(frozen=True)
class TextSignals:
    """What the gate reads from a candidate's text (beside its cosine and engine coverage)."""

    background: float  # background coverage (services/search/background_terms.py)
    evidence: float = 0.0  # services/search/evidence.py
    reach: float = 0.0

    def similarity(self, calibration: Calibration, hit: FusedHit) -> float:
        return calibration.similarity(
            hit.vector_score, hit.coverage, self.background, self.evidence, self.reach
        )


def window_signals(
    query: str, texts: Mapping[str, str], *, read_evidence: bool = True
) -> dict[str, TextSignals]:
    """Chunk id → its text signals, for the window's passages (chunk id → text); without
    `read_evidence` (a row that does not weigh it), only the background coverage."""
    terms = weighted_terms(query)
    found = evidence(terms, texts) if read_evidence else {}
    none = Evidence(0.0, 0.0)
    return {
        cid: TextSignals(text_coverage(terms, text), *astuple(found.get(cid, none)))
        for cid, text in texts.items()
    }


SHOWN_DIGITS = 2  # lists are sorted by the similarity as a person reads it


def shown_order(hits: Sequence[FusedHit], similarity: Mapping[str, float]) -> list[FusedHit]:
    """`hits` sorted by their similarity to SHOWN_DIGITS places, best first; equal ones keep
    the fused order (two passages a person reads as equally relevant keep the engines' say)."""
    return sorted(hits, key=lambda h: -round(similarity[h.chunk_id], SHOWN_DIGITS))


def read_window(
    query: str, texts: Mapping[str, str], calibration: Calibration
) -> tuple[dict[str, TextSignals], TextSignals]:
    """The window's signals, and those of a hit outside it: it holds none of the words it
    was not read for, and the reach (what the candidates hold of the question) is the query's.
    Evidence is read only for a row that weighs it."""
    weighs = calibration.evidence or calibration.reach or calibration.evidence_reach
    signals = window_signals(query, texts, read_evidence=bool(weighs))
    reach = next(iter(signals.values())).reach if signals else 0.0
    return signals, TextSignals(0.0, reach=reach)


def gate_window(fused: Sequence[FusedHit], limit: int) -> list[FusedHit]:
    """The candidates whose text the gate reads: the best by fused rank, then the best by
    keyword coverage wherever fusion put them."""
    window = list(fused[: max(GATE_WINDOW, 4 * limit)])
    seen = {h.chunk_id for h in window}
    by_keywords = sorted((h for h in fused if h.coverage > 0), key=lambda h: -h.coverage)
    return window + [h for h in by_keywords[:KEYWORD_WINDOW] if h.chunk_id not in seen]


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
    window = gate_window(fused, limit)
    if window:
        chunks.update((c.id, c) for c in metadata.get_chunks_by_ids(
            workspace_id, [h.chunk_id for h in window if h.chunk_id not in chunks]
        ))  # fmt: skip
    texts = {h.chunk_id: chunks[h.chunk_id].content for h in window if h.chunk_id in chunks}
    signals, outside = read_window(query, texts, calibration)
    keyword_only = CALIBRATIONS["keyword"]
    found: dict[str, float] = {}
    unsure: list[tuple[FusedHit, float]] = []  # scored by keywords alone, if indexing
    for hit in fused:
        text = signals.get(hit.chunk_id, outside)
        found[hit.chunk_id] = score = text.similarity(calibration, hit)
        if score < min_score and hit.engines == ("keyword",):
            alone = text.similarity(keyword_only, hit)
            if alone >= min_score:
                unsure.append((hit, alone))
    fetch_documents(metadata, workspace_id, [h.document_id for h, _ in unsure], documents)
    for hit, alone in unsure:
        doc = documents[hit.document_id]
        if doc is not None and doc.status is DocumentStatus.INDEXING:
            found[hit.chunk_id] = alone
    return found
