"""Rebuilding one index generation from metadata (DESIGN decision 1): a whole generation
(`bunko reindex`, the startup check), or one workspace's chunks into a generation (a change of the
workspace's embedding model, services/embedding/model_switch.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bunko.ports import (
    DEFAULT_MODEL,
    Embedder,
    EmbeddingGeneration,
    EmbeddingGenerations,
    IndexEntry,
    MetadataStore,
    TrainableEmbedder,
)
from bunko.services.embedding.index_entries import batched, entries_for

Progress = Callable[[int], None]


def embed_texts(embedder: Embedder | None, texts: list[str], batch_size: int) -> np.ndarray | None:
    """The texts' vectors in batches of `batch_size`; None when the embedder gives none."""
    if embedder is None or not texts:
        return None
    if isinstance(embedder, TrainableEmbedder) and not embedder.is_fitted:
        return None  # LSA before its first training: keyword search only
    parts = [
        embedder.embed_documents(texts[i : i + batch_size])
        for i in range(0, len(texts), batch_size)
    ]
    return np.vstack(parts).astype(np.float32, copy=False)


def reindex_generation(
    metadata: MetadataStore,
    generation: EmbeddingGeneration,
    *,
    workspace_id: str | None = None,
    include: Callable[[str], bool] | None = None,
    batch_size: int = 64,
    retrain: bool = False,
    progress: Progress | None = None,
    keywords_first: bool = False,
    clear: bool = True,
) -> int:
    """Clear the generation's index (of `workspace_id`, or whole) and rebuild it from metadata;
    `include(workspace_id)` picks the workspaces this generation serves. With an LSA embedder
    and `retrain`, fit it on every chunk first. `keywords_first`: every chunk's keyword entry
    is written before any vector, so search finds everything by its words within seconds
    while a slow model embeds (entry counts then no longer show a rebuild killed midway: the
    caller marks it unfinished until this returns). `progress` gets each batch's chunk count
    (it may raise to stop the rebuild). `clear` False: the caller cleared it. Returns the
    chunks indexed."""
    embedder, index = generation.embedder, generation.index
    if retrain and isinstance(embedder, TrainableEmbedder):
        embedder.fit([c.content for c in metadata.iter_chunks(workspace_id)])
    if clear:
        index.clear(workspace_id)
    documents = {
        d.id: d
        for d in metadata.iter_documents(workspace_id)
        if include is None or include(d.workspace_id)
    }
    first = keywords_first and embedder is not None
    total = 0
    for with_vectors in (False, True) if first else (True,):
        total = 0
        for batch in batched(metadata.iter_chunks(workspace_id), batch_size * 4):
            kept = [c for c in batch if c.document_id in documents]
            texts = [c.content for c in kept]
            vectors = embed_texts(embedder, texts, batch_size) if with_vectors else None
            entries: list[IndexEntry] = []
            for i, chunk in enumerate(kept):
                vector = None if vectors is None else vectors[i : i + 1]
                entries += entries_for(documents[chunk.document_id], [chunk], vector)
            index.index(entries)
            total += len(entries)
            if progress and with_vectors:
                progress(len(batch))
    return total


def reindex_served(
    metadata: MetadataStore,
    generations: EmbeddingGenerations,
    default: EmbeddingGeneration,
    workspace_id: str | None,
    batch_size: int,
    **options,
) -> int:
    """Rebuild from metadata (options: retrain, progress, keywords_first) one workspace's
    serving generation, or the whole `default` generation (the workspaces on a model config of
    their own keep theirs). Returns the chunks."""
    if workspace_id is not None:
        generation = generations.chosen(workspace_id)
        return reindex_generation(
            metadata, generation, workspace_id=workspace_id, batch_size=batch_size, **options
        )
    include = lambda ws: generations.chosen(ws).model == DEFAULT_MODEL  # noqa: E731
    return reindex_generation(metadata, default, include=include, batch_size=batch_size, **options)
