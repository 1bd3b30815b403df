"""ChunkItemsService: TelosDB's chunk-level operations ("items" are chunks); the document
reads are the library wing's (services/library).

Edits keep DESIGN decision 1: the metadata store is written first and stays the truth; the
index follows. An edited item keeps its id; the revision's original file and extracted text
are immutable blobs, so a sealed research corpus still reads the exact old text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from bunko.domain import Chunk, Document, DocumentStatus
from bunko.errors import NotFoundError, PayloadTooLargeError, ValidationError
from bunko.ports import (
    BlobStore,
    EmbeddingGenerations,
    MetadataStore,
    write_targets,
)
from bunko.services.embedding import embed_texts, entries_for

log = logging.getLogger(__name__)

# One item is one chunk; far above any chunk size, and far below DynamoDB's 400 KB item limit.
MAX_ITEM_CHARS = 50_000


@dataclass(frozen=True)
class ItemView:
    chunk: Chunk
    document: Document


class ChunkItemsService:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        blobs: BlobStore,
        generations: EmbeddingGenerations,
        read_sentences: Callable[[str], str] | None = None,
    ) -> None:
        """`generations`: the model and index generation of each workspace;
        `read_sentences`: as the indexing pipeline's (an edited item is read again)."""
        self.metadata = metadata
        self.blobs = blobs
        self.generations = generations
        self.read_sentences = read_sentences

    def get_item(self, workspace_id: str, item_id: str) -> ItemView:
        """Raises NotFoundError for an unknown id and for another workspace's id alike."""
        chunk = self.metadata.get_chunk(workspace_id, item_id)
        document = self.metadata.get_document(workspace_id, chunk.document_id) if chunk else None
        if chunk is None or document is None:
            raise NotFoundError(f"item {item_id} not found")
        return ItemView(chunk, document)

    def update_item(self, workspace_id: str, item_id: str, content: str) -> ItemView:
        """Replace an item's text, re-embed and re-index it; the id stays the same."""
        if not content.strip():
            raise ValidationError("content must not be empty")
        if len(content) > MAX_ITEM_CHARS:
            raise PayloadTooLargeError(
                f"content is {len(content)} characters; an item holds at most {MAX_ITEM_CHARS}"
            )
        old = self.get_item(workspace_id, item_id)
        # The old reading names the old text, so it would not be used; read the new one.
        read = self.read_sentences(content) if self.read_sentences is not None else None
        chunk = replace(old.chunk, content=content, sentence_terms=read)
        # Every generation the workspace writes (two while its model changes), held steady.
        with self.generations.steady():
            targets = write_targets(self.generations, workspace_id)
            # Embedded before any write: a model failure changes nothing.
            vectors = [embed_texts(t.embedder, [content], 1) for t in targets]
            self.metadata.save_chunk(chunk)
            try:
                for target, vector in zip(targets, vectors, strict=True):
                    target.index.index(entries_for(old.document, [chunk], vector))
            except Exception:
                self.metadata.save_chunk(old.chunk)  # metadata and index tell the same story
                raise
        return ItemView(chunk, old.document)

    def delete_item(self, workspace_id: str, item_id: str) -> ItemView:
        view = self.get_item(workspace_id, item_id)
        if not self.metadata.delete_chunk(workspace_id, item_id):
            raise NotFoundError(f"item {item_id} not found")
        try:
            with self.generations.steady():
                for target in write_targets(self.generations, workspace_id):
                    target.index.delete_chunks(workspace_id, [item_id])
        except Exception:  # a stale index entry is filtered out by search (decision 1)
            log.exception("could not remove item %s from the index", item_id)
        self._recount(workspace_id, view.document.id, view.chunk.revision)
        return view

    def _recount(self, workspace_id: str, document_id: str, revision: int) -> None:
        doc = self.metadata.get_document(workspace_id, document_id)
        if doc is None or doc.revision != revision or doc.status is not DocumentStatus.COMPLETED:
            return  # a newer revision is being indexed; it sets its own count
        doc.chunk_count = len(self.metadata.get_chunks(workspace_id, document_id))
        self.metadata.save_document(doc)
