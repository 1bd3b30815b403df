"""Index entries from chunks: what the pipeline, the reindex and chunk edits write."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from bunko.domain import Chunk, Document
from bunko.domain.metadata import terms_of
from bunko.ports import IndexEntry


def entries_for(
    doc: Document, chunks: Sequence[Chunk], vectors: np.ndarray | None
) -> list[IndexEntry]:
    terms = tuple(terms_of(doc.metadata, doc.category))
    return [
        IndexEntry(
            chunk_id=c.id,
            document_id=doc.id,
            workspace_id=doc.workspace_id,
            revision=c.revision,
            text=c.content,
            category=doc.category,
            vector=None if vectors is None else vectors[i],
            metadata_terms=terms,
        )
        for i, c in enumerate(chunks)
    ]


def batched(items: Iterable[Chunk], size: int) -> Iterable[list[Chunk]]:
    batch: list[Chunk] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
