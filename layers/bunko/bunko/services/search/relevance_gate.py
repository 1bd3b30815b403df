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
from functools import lru_cache
from pathlib import PurePosixPath

from bunko.domain import Chunk, Document, DocumentStatus, chunk_id_for
from bunko.domain.sentences import is_heading
from bunko.ports import MetadataStore
from bunko.services.search.background_terms import text_coverage, weighted_terms
from bunko.services.search.calibration import CALIBRATIONS, CLAIM_ROWS, Calibration, for_claims
from bunko.services.search.evidence import (
    KANA,
    Evidence,
    answer_type,
    evidence,
    is_claim,
    question_terms,
)
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
    pair: float = 0.0  # evidence over two adjacent sentences
    absent: float = 0.0

    def similarity(self, calibration: Calibration, hit: FusedHit) -> float:
        return calibration.similarity(
            hit.vector_score,
            hit.coverage,
            self.background,
            self.evidence,
            self.reach,
            self.absent,
        )


def window_signals(
    query: str,
    texts: Mapping[str, str],
    context: Mapping[str, str] | None = None,
    *,
    read_evidence: bool = True,
    stored: Mapping[str, str | None] | None = None,
) -> dict[str, TextSignals]:
    """Chunk id → its text signals, for the window's passages (chunk id → text, read with
    their documents' `context`, window_context, and the sentence readings `stored` with
    them at ingest); without `read_evidence` (a row that does not weigh it), only the
    background coverage."""
    terms = weighted_terms(query)
    found = (
        evidence(
            question_terms(query),
            texts,
            context,
            stored=stored,
            claim=is_claim(query),
            wants=answer_type(query),
        )
        if read_evidence
        else {}
    )
    none = Evidence(0.0, 0.0)
    return {
        cid: TextSignals(text_coverage(terms, text), *astuple(found.get(cid, none)))
        for cid, text in texts.items()
    }


@lru_cache(maxsize=8192)
def _title(content: str) -> str:
    """A document's title: the heading lines its first chunk (`content`) opens with (cached:
    the same documents recur across queries, and telling a heading is the costly part)."""
    lines = []
    for line in content.splitlines():
        if not line.strip():
            continue
        if not is_heading(line):
            break
        lines.append(line.lstrip("# "))
    return "\n".join(lines)


def window_context(
    metadata: MetadataStore,
    workspace_id: str,
    window: Sequence[Chunk],
    documents: dict[str, Document | None],
) -> dict[str, str]:
    """Chunk id → the context its document gives it: the file's name (without its extension)
    and its title. Reads the window's documents into `documents` and their first chunks in one
    call each (the page is built from the same documents)."""
    fetch_documents(metadata, workspace_id, [c.document_id for c in window], documents)
    have = {(c.document_id, c.revision): c for c in window if c.index == 0}
    wanted = {
        chunk_id_for(c.document_id, c.revision, 0)
        for c in window
        if (c.document_id, c.revision) not in have
    }
    if wanted:
        for c in metadata.get_chunks_by_ids(workspace_id, sorted(wanted)):
            have[(c.document_id, c.revision)] = c
    out = {}
    for c in window:
        doc = documents.get(c.document_id)
        name = PurePosixPath(doc.name).stem if doc is not None else ""
        first = have.get((c.document_id, c.revision))
        out[c.id] = f"{name}\n{_title(first.content)}" if first is not None else name
    return out


SHOWN_DIGITS = 2  # lists are sorted by the similarity as a person reads it


def shown_order(hits: Sequence[FusedHit], similarity: Mapping[str, float]) -> list[FusedHit]:
    """`hits` sorted by their similarity to SHOWN_DIGITS places, best first; equal ones keep
    the fused order (two passages a person reads as equally relevant keep the engines' say)."""
    return sorted(hits, key=lambda h: -round(similarity[h.chunk_id], SHOWN_DIGITS))


def row_for(
    query: str, calibration: Calibration, claim_rows: Mapping[str, Calibration] = CLAIM_ROWS
) -> Calibration:
    """The row that judges `query`: a claim's own (`claim_rows`, default
    calibration.CLAIM_ROWS) where its model has one, else `calibration`."""
    return for_claims(calibration, claim_rows) if is_claim(query) else calibration


def weighs_evidence(calibration: Calibration) -> bool:
    return bool(
        calibration.evidence
        or calibration.reach
        or calibration.evidence_reach
        or calibration.absent
    )


def read_window(
    query: str,
    texts: Mapping[str, str],
    context: Mapping[str, str],
    calibration: Calibration,
    *,
    stored: Mapping[str, str | None] | None = None,
) -> tuple[dict[str, TextSignals], TextSignals]:
    """The window's signals, and those of a hit outside it: it holds none of the words it
    was not read for, and the reach (what the candidates hold of the question) and what no
    candidate holds are the window's.
    Evidence is read only for a row that weighs it; `stored`: chunk id → the chunk's
    sentence reading stored at ingest (Chunk.sentence_terms)."""
    signals = window_signals(
        query, texts, context, read_evidence=weighs_evidence(calibration), stored=stored
    )
    reach = max((s.reach for s in signals.values()), default=0.0)
    absent = max((s.absent for s in signals.values()), default=0.0)  # the query's, per window
    return signals, TextSignals(0.0, reach=reach, absent=absent)


def for_question(calibration: Calibration, query: str, outside: TextSignals) -> Calibration:
    """The row that judges this question: the row's Japanese one for a question in Japanese
    whose candidates are in its language (the window holds some of its words: `reach`, 0
    across languages), else the row itself."""
    japanese = calibration.japanese is not None and not is_claim(query)
    if japanese and outside.reach > 0 and KANA.search(query):
        return calibration.japanese
    return calibration


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
    claim_rows: Mapping[str, Calibration] = CLAIM_ROWS,
) -> dict[str, float]:
    """Chunk id → similarity for every fused hit. Fills `chunks` with the window's chunks
    and `documents` with those it had to read. A chunk whose document is still `indexing`
    has no vector yet: its cosine is missing, not low, so its keywords alone decide."""
    calibration = row_for(query, calibration, claim_rows)
    window = gate_window(fused, limit)
    if window:
        chunks.update(
            (c.id, c)
            for c in metadata.get_chunks_by_ids(
                workspace_id, [h.chunk_id for h in window if h.chunk_id not in chunks]
            )
        )
    read = [chunks[h.chunk_id] for h in window if h.chunk_id in chunks]
    texts = {c.id: c.content for c in read}
    context = (
        window_context(metadata, workspace_id, read, documents)
        if weighs_evidence(calibration)
        else {}
    )
    stored = {c.id: c.sentence_terms for c in read}
    signals, outside = read_window(query, texts, context, calibration, stored=stored)
    calibration = for_question(calibration, query, outside)
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
