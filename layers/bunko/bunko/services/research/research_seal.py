"""What a seal holds: each evidence item resolved to its passages at the exact revision.

Text comes from the document's current chunks when the evidence names the current revision,
else from passages an earlier corpus pinned; anything else is reported missing (coverage
`partial`), never silently replaced by another revision's text.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from bunko.domain import DocumentStatus
from bunko.domain.metadata import terms_of
from bunko.domain.research import (
    MAX_MISSING_SOURCE_CHARS,
    MAX_MISSING_SOURCES,
    CorpusPassage,
    Evidence,
    EvidenceKind,
    Passage,
)
from bunko.ports import Embedder, MetadataStore, ResearchStore, TrainableEmbedder

_EMBED_BATCH = 64


@dataclass
class Resolution:
    passages: list[CorpusPassage] = field(default_factory=list)
    held: list[Evidence] = field(default_factory=list)  # evidence the corpus holds
    missing: list[str] = field(default_factory=list)


def draw_sample(
    evidence: Sequence[Evidence], size: int | None, seed: int
) -> tuple[list[Evidence], str | None]:
    """A seeded random sample without replacement (reproducible from the description)."""
    if size is None or size >= len(evidence):
        return list(evidence), None
    chosen = set(random.Random(seed).sample(sorted(e.id for e in evidence), size))
    how = (
        f"seeded random sample without replacement: {size} of {len(evidence)} evidence items "
        f"(Python random.Random({seed}).sample over evidence ids in sorted order)"
    )
    return [e for e in evidence if e.id in chosen], how


def resolve(
    evidence: Sequence[Evidence], *, metadata: MetadataStore, store: ResearchStore
) -> Resolution:
    out = Resolution()
    for item in evidence:
        passages, problem = _passages_of(item, metadata, store)
        if problem is not None:
            out.missing.append(problem)
            continue
        out.held.append(item)
        out.passages.extend(CorpusPassage(item.id, p) for p in passages)
    return out


def _passages_of(
    item: Evidence, metadata: MetadataStore, store: ResearchStore
) -> tuple[list[Passage], str | None]:
    ws, doc_id, rev = item.workspace_id, item.document_id, item.revision
    doc = metadata.get_document(ws, doc_id)
    current: list[Passage] = []
    # The metadata as it is now (a deleted document: as an earlier seal kept it).
    terms = tuple(terms_of(doc.metadata, doc.category)) if doc is not None else None
    if doc is not None and doc.revision == rev and doc.status is DocumentStatus.COMPLETED:
        chunks = [c for c in metadata.get_chunks(ws, doc_id) if c.revision == rev]
        current = [
            Passage(
                chunk_id=c.id,
                workspace_id=ws,
                document_id=doc_id,
                revision=rev,
                index=c.index,
                content=c.content,
                start=c.start,
                end=c.end,
                page=c.page,
                of_chunks=len(chunks),
                metadata_terms=terms or (),
            )
            for c in chunks
        ]
    pinned: dict[str, Passage] = {}
    for copy in store.pinned_passages(ws, doc_id, rev):
        if terms is not None:
            copy = replace(copy, metadata_terms=terms)
        pinned.setdefault(copy.chunk_id, copy)  # the most recently sealed copy of each chunk
    where = f"document {doc_id} revision {rev}"
    if item.kind is EvidenceKind.CHUNK:
        where = f"chunk {item.chunk_id} revision {rev}"
        found = [p for p in current if p.chunk_id == item.chunk_id]
        found = found or [p for p in pinned.values() if p.chunk_id == item.chunk_id]
        return (found, None) if found else ([], _note(where, doc, rev))
    if current:
        return current, None
    whole = sorted(pinned.values(), key=lambda p: p.index)
    if whole and len(whole) == whole[0].of_chunks:
        return whole, None
    return [], _note(where, doc, rev)


def _note(where: str, doc, rev: int) -> str:
    if doc is None:
        why = "deleted"
    elif doc.revision != rev:
        why = f"superseded by revision {doc.revision}, text not kept"
    elif doc.status is not DocumentStatus.COMPLETED:
        why = f"not indexed ({doc.status})"
    else:
        why = "no longer holds this text"
    return clip(f"{where}: {why}")


def clip(text: str) -> str:
    limit = MAX_MISSING_SOURCE_CHARS
    return text if len(text) <= limit else text[: limit - 1] + "…"


def missing_sources(notes: Sequence[str]) -> tuple[str, ...]:
    """At most MAX_MISSING_SOURCES entries; the last one counts what did not fit."""
    if len(notes) <= MAX_MISSING_SOURCES:
        return tuple(notes)
    kept = list(notes[: MAX_MISSING_SOURCES - 1])
    return (*kept, f"and {len(notes) - len(kept)} more missing sources")


def with_vectors(
    passages: Sequence[CorpusPassage], embedder: Embedder | None
) -> list[CorpusPassage]:
    """Embed passages that have no vector from this embedder yet (pinned ones keep theirs)."""
    if embedder is None or (isinstance(embedder, TrainableEmbedder) and not embedder.is_fitted):
        return list(passages)
    todo = [i for i, cp in enumerate(passages) if cp.passage.embedder != embedder.name]
    out = list(passages)
    for start in range(0, len(todo), _EMBED_BATCH):
        batch = todo[start : start + _EMBED_BATCH]
        vectors = np.asarray(
            embedder.embed_documents([out[i].passage.content for i in batch]), dtype="<f4"
        )
        for i, vector in zip(batch, vectors, strict=True):
            p = replace(out[i].passage, vector=vector.tobytes(), embedder=embedder.name)
            out[i] = CorpusPassage(out[i].evidence_id, p)
    return out
