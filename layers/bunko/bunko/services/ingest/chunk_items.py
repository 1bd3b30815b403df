"""ChunkItemsService: TelosDB's chunk-level operations ("items" are chunks) and document reads.

Edits keep DESIGN decision 1: the metadata store is written first and stays the truth; the
index follows. An edited item keeps its id; the revision's original file and extracted text
are immutable blobs, so a sealed research corpus still reads the exact old text.
"""

from __future__ import annotations

import bisect
import logging
import math
import time
from dataclasses import dataclass, replace

from bunko.domain import Chunk, Document, DocumentStatus
from bunko.domain.document_query import DocumentQuery
from bunko.domain.metadata import Filter as MetadataFilter
from bunko.domain.metadata import both, category_filter, summarise
from bunko.errors import NotFoundError, PayloadTooLargeError, ValidationError
from bunko.ports import (
    BlobStore,
    EmbeddingGenerations,
    MetadataStore,
    write_targets,
)
from bunko.services.embedding import embed_texts, entries_for
from bunko.services.ingest.document_chunks import stored_text

log = logging.getLogger(__name__)

# One item is one chunk; far above any chunk size, and far below DynamoDB's 400 KB item limit.
MAX_ITEM_CHARS = 50_000
MAX_PAGE_SIZE = 100
# A file's chunks are read a page at a time, because a buffered Lambda response stops at 6 MB
# (DESIGN decision 2). The largest chunk is an edited item (MAX_ITEM_CHARS; ingest cuts at
# most 20,000 characters), about 4 bytes a character as UTF-8 JSON: 200 KB. So the default
# page is at most 2 MB, and the largest one 5 MB.
CHUNK_PAGE_SIZE = 10
MAX_CHUNK_PAGE_SIZE = 25
MAX_CHUNK_POSITION = 1_000_000_000  # an offset or chunk index; far beyond any file


@dataclass(frozen=True)
class ItemView:
    chunk: Chunk
    document: Document


@dataclass(frozen=True)
class DocumentView:
    document: Document
    text: str
    chunks: list[Chunk]


@dataclass(frozen=True)
class ChunkPage:
    document: Document
    chunks: list[Chunk]
    total: int  # the document's chunks, all pages together
    offset: int  # where `chunks` starts in reading order
    limit: int


@dataclass(frozen=True)
class DocumentPage:
    items: list[Document]
    total_count: int
    total_pages: int
    page: int


class ChunkItemsService:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        blobs: BlobStore,
        generations: EmbeddingGenerations,
    ) -> None:
        """`generations`: the model and index generation of each workspace."""
        self.metadata = metadata
        self.blobs = blobs
        self.generations = generations

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
        chunk = replace(old.chunk, content=content)
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

    def get_document(self, workspace_id: str, document_id: str) -> DocumentView:
        document = self.metadata.get_document(workspace_id, document_id)
        if document is None:
            raise NotFoundError(f"document {document_id} not found")
        chunks = self.metadata.get_chunks(workspace_id, document_id)
        text = stored_text(document, self.blobs)
        if text is None:  # not extracted yet
            text = _join_chunks(chunks)
        return DocumentView(document, text, chunks)

    def chunk_page(
        self,
        workspace_id: str,
        document_id: str,
        *,
        limit: int = CHUNK_PAGE_SIZE,
        offset: int | None = None,
        chunk: int | None = None,
    ) -> ChunkPage:
        """Up to `limit` of a document's chunks in reading order, from position `offset`, or
        the page (a multiple of `limit`) holding the chunk whose index is `chunk`: where it
        would be if it is gone, the last page if it is past the end. A page past the end is
        empty, never an error. Raises NotFoundError for another workspace's id."""
        if not 1 <= limit <= MAX_CHUNK_PAGE_SIZE:
            raise ValidationError(f"limit must be between 1 and {MAX_CHUNK_PAGE_SIZE}")
        for name, value in (("offset", offset), ("chunk", chunk)):
            if value is not None and not 0 <= value <= MAX_CHUNK_POSITION:
                raise ValidationError(f"{name} must be between 0 and {MAX_CHUNK_POSITION}")
        if offset is not None and chunk is not None:
            raise ValidationError("give offset or chunk, not both")
        document = self.metadata.get_document(workspace_id, document_id)
        if document is None:
            raise NotFoundError(f"document {document_id} not found")
        # The port reads a document's chunks whole: paging bounds the response, not the read.
        chunks = self.metadata.get_chunks(workspace_id, document_id)
        if chunk is not None:
            at = bisect.bisect_left([c.index for c in chunks], chunk)
            offset = min(at, max(len(chunks) - 1, 0)) // limit * limit
        start = offset or 0
        return ChunkPage(document, chunks[start : start + limit], len(chunks), start, limit)

    def list_documents(
        self,
        workspace_id: str,
        *,
        limit: int = 20,
        page: int = 1,
        category: str | None = None,
        metadata: MetadataFilter | None = None,
    ) -> DocumentPage:
        """TelosDB paging: a page past the end is empty, never an error. `metadata`: only the
        documents whose metadata passes it."""
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise ValidationError(f"limit must be between 1 and {MAX_PAGE_SIZE}")
        if page < 1:
            raise ValidationError("page starts at 1")
        if metadata is not None:  # newest first, as below, through the filtered listing
            flt = both(metadata, category_filter(category) if category else None)
            found = self.metadata.find_documents(
                workspace_id, DocumentQuery(filter=flt), limit=limit, offset=(page - 1) * limit
            )
            pages = math.ceil(found.total / limit)
            return DocumentPage(
                items=found.documents, total_count=found.total, total_pages=pages, page=page
            )
        total = self.metadata.count_documents(workspace_id, category=category)
        pages = math.ceil(total / limit)
        items = (
            self.metadata.list_documents(
                workspace_id, limit=limit, offset=(page - 1) * limit, category=category
            )
            if page <= pages
            else []
        )
        return DocumentPage(items=items, total_count=total, total_pages=pages, page=page)

    def list_categories(self, workspace_id: str) -> list[str]:
        return self.metadata.list_categories(workspace_id)

    def metadata_keys(self, workspace_id: str) -> list[dict]:
        """The metadata keys the workspace's documents use, with their value types and most
        common values: what a filter can name."""
        return summarise(d.metadata for d in self.metadata.iter_documents(workspace_id))

    def count_documents(self, workspace_id: str) -> int:
        return self.metadata.count_documents(workspace_id)

    def count_chunks(self, workspace_id: str | None = None) -> int:
        """The chunks of a workspace (None: of every workspace)."""
        return self.metadata.count_chunks(workspace_id)

    def chunks(self, workspace_id: str, document_id: str) -> list[Chunk]:
        """A document's chunks, whole (empty for an unknown id); `chunk_page` pages them."""
        return self.metadata.get_chunks(workspace_id, document_id)

    def wait_until_indexed(
        self, workspace_id: str, document_id: str, *, timeout: float, poll: float = 0.01
    ) -> Document:
        """The document once indexing ends (completed or failed), or as it is at `timeout`.
        Works with any queue, because it only watches the metadata store."""
        deadline = time.monotonic() + timeout
        while True:
            doc = self.metadata.get_document(workspace_id, document_id)
            if doc is None:
                raise NotFoundError(f"document {document_id} was deleted while it was indexed")
            finished = doc.settled
            if finished or time.monotonic() >= deadline:
                return doc
            time.sleep(poll)
            poll = min(poll * 1.5, 0.5)  # quick for a local worker, gentle on a cloud store


def _join_chunks(chunks: list[Chunk]) -> str:
    """Rebuild text from overlapping chunks using their offsets."""
    text = ""
    for chunk in sorted(chunks, key=lambda c: c.index):
        overlap = max(0, len(text) - chunk.start) if chunk.end > chunk.start else 0
        text += chunk.content[overlap:]
    return text
