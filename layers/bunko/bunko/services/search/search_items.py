"""Ranked hits → search results: the chunks and documents read back from the metadata store
(DESIGN decision 1: a chunk or document that is gone never comes back, even from a stale
index), grouped by document as TelosDB does.

Only the hits that can reach the page are read: the first `limit` documents' hits (up to
MAX_READ_PER_DOCUMENT each), in one batch read of chunks and one of documents. Reading every
candidate (~180 chunks of ~100 documents for a page of 10) was ~40% of a search's time at
100k chunks; on AWS each read is a round trip. A stale hit leaves a gap that the next
round fills from the hits after it.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from bunko.domain import Chunk, Document
from bunko.domain.metadata import Filter as MetadataFilter
from bunko.domain.metadata import matches, shown, terms_of
from bunko.ports import MetadataStore
from bunko.services.search.fusion import FusedHit

# A grouped result joins at most this many of a document's best chunks.
MAX_JOINED_CHUNKS = 3
# Hits read per document: the joined chunks, with room for a few stale ones.
MAX_READ_PER_DOCUMENT = 2 * MAX_JOINED_CHUNKS


@dataclass
class SearchItem:
    id: str  # the chunk id (the best chunk, when grouped by document)
    document_id: str
    path: str
    mime: str
    category: str | None
    content: str
    similarity: float
    vector_score: float
    text_score: float
    chunk_index: int
    name: str = ""
    # The engines that found this chunk: "keyword" alone while its document's vectors are
    # still being computed (a large file is keyword-searchable as soon as it is parsed).
    engines: list[str] = field(default_factory=list)
    # The page (PDF), slide (pptx) or sheet (xlsx) it starts and ends on; None: unpaged.
    page: int | None = None
    page_end: int | None = None
    metadata: dict = field(default_factory=dict)  # its document's (domain/metadata.shown)
    # The chunk itself (the best one, when grouped): where a quoted sentence's page is found.
    chunk: Chunk | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "chunk"}


def fetch_documents(
    metadata: MetadataStore,
    workspace_id: str,
    ids: Sequence[str],
    documents: dict[str, Document | None],
) -> None:
    """Read the documents not read yet into `documents` (None: gone), in one call."""
    if missing := [d for d in dict.fromkeys(ids) if d not in documents]:
        documents.update(dict.fromkeys(missing))
        found = metadata.get_documents_by_ids(workspace_id, missing)
        documents.update((d.id, d) for d in found)


def materialise(
    metadata: MetadataStore,
    workspace_id: str,
    kept: Sequence[FusedHit],
    similarity: dict[str, float],
    *,
    limit: int,
    group_by_document: bool,
    documents: dict[str, Document | None],
    chunks: dict[str, Chunk] | None = None,
    metadata_filter: MetadataFilter | None = None,
) -> list[SearchItem]:
    """Up to `limit` results from the hits (best first) that passed min_score; `chunks`:
    those already read (by the relevance gate), not read again. `metadata_filter`: checked
    again on each document as stored now (an engine's copy of its terms may lag an edit)."""
    known = chunks or {}
    items: list[SearchItem] = []
    grouped: dict[str, tuple[SearchItem, list[Chunk]]] = {}
    rest = list(kept)
    while rest and len(items) < limit:
        wanted, rest = _next_hits(rest, limit - len(items), group_by_document, grouped)
        ids = [h.chunk_id for h in wanted if h.chunk_id not in known]
        read = {c.id: c for c in metadata.get_chunks_by_ids(workspace_id, ids)} if ids else {}
        read.update((h.chunk_id, known[h.chunk_id]) for h in wanted if h.chunk_id in known)
        fetch_documents(metadata, workspace_id, [c.document_id for c in read.values()], documents)
        for hit in wanted:
            chunk = read.get(hit.chunk_id)
            doc = documents.get(chunk.document_id) if chunk is not None else None
            if chunk is None or doc is None:
                continue  # a stale index entry: metadata is the source of truth
            if metadata_filter is not None and not matches(
                metadata_filter, terms_of(doc.metadata, doc.category)
            ):
                continue
            if group_by_document and doc.id in grouped:
                if len(grouped[doc.id][1]) < MAX_JOINED_CHUNKS:
                    grouped[doc.id][1].append(chunk)
                continue
            if len(items) >= limit:
                continue
            item = SearchItem(
                id=chunk.id,
                document_id=doc.id,
                path=doc.path,
                mime=doc.mime,
                category=doc.category,
                content=chunk.content,
                similarity=round(similarity[hit.chunk_id], 6),
                vector_score=round(hit.vector_score, 6),
                text_score=round(hit.coverage, 6),
                chunk_index=chunk.index,
                name=doc.name,
                engines=list(hit.engines),
                page=chunk.page,
                page_end=chunk.page_end,
                metadata=shown(doc.metadata),
                chunk=chunk,
            )
            items.append(item)
            grouped[doc.id] = (item, [chunk])
    if group_by_document:
        for item, matched in grouped.values():
            # TelosDB joins a document's matching chunks into one result, in reading order.
            item.content = "\n…\n".join(c.content for c in sorted(matched, key=lambda c: c.index))
            if item.page is not None:  # the pages the joined passages span
                item.page = min(c.page or item.page for c in matched)
                item.page_end = max(c.page_end or item.page for c in matched)
    return items


def _next_hits(
    hits: list[FusedHit], places: int, group: bool, grouped: Container[str]
) -> tuple[list[FusedHit], list[FusedHit]]:
    """The hits worth reading to fill `places` more results, and those left for a next
    round. Grouped: every hit (up to MAX_READ_PER_DOCUMENT a document) of the documents
    already shown or of the first `places` new ones; else the first `places` hits."""
    if not group:
        return hits[:places], hits[places:]
    read: dict[str, int] = {}
    wanted: list[FusedHit] = []
    left: list[FusedHit] = []
    new = 0
    for hit in hits:
        doc = hit.document_id
        if doc not in read and doc not in grouped:
            if new >= places:
                left.append(hit)
                continue
            new += 1
        if read.get(doc, 0) < MAX_READ_PER_DOCUMENT:
            read[doc] = read.get(doc, 0) + 1
            wanted.append(hit)
    return wanted, left
