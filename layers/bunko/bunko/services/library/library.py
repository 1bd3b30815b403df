"""Library: what a library holds, read one way by every door. Its documents (one, by id or
path; a page of them, as each dialect pages; a source's), a document's text and chunks, its
categories and metadata keys, and waiting for a document to settle. The write side (uploads,
revisions, deletes, a source's mirror) is the ingest wing's; the item edits are ChunkItemsService's.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from bunko.domain import Chunk, Document, DocumentStatus
from bunko.domain.document_query import DocumentPage as FilePage
from bunko.domain.document_query import DocumentQuery
from bunko.domain.metadata import Filter as MetadataFilter
from bunko.domain.metadata import both, category_filter, summarise
from bunko.errors import NotFoundError, ValidationError
from bunko.ports import BlobStore, MetadataStore
from bunko.services.library.blob_keys import text_key

MAX_PAGE_SIZE = 100
# A file's chunks are read a page at a time, because a buffered Lambda response stops at 6 MB
# (DESIGN decision 2). The largest chunk is an edited item (50,000 characters at most; ingest
# cuts at most 20,000), about 4 bytes a character as UTF-8 JSON: 200 KB. So the default page
# is at most 2 MB, and the largest one 5 MB.
CHUNK_PAGE_SIZE = 10
MAX_CHUNK_PAGE_SIZE = 25
MAX_CHUNK_POSITION = 1_000_000_000  # an offset or chunk index; far beyond any file


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
    """A TelosDB page of documents (numbered pages)."""

    items: list[Document]
    total_count: int
    total_pages: int
    page: int


@dataclass(frozen=True)
class IndexingProgress:
    status: str  # "idle" | "indexing"
    pending: int  # this workspace's documents waiting or being indexed
    queued: int  # jobs in this server's ingest queue (all workspaces)
    documents: int
    completed: int
    failed: int


class Library:
    """The read side of every library (a workspace), over the metadata and blob stores."""

    def __init__(
        self,
        *,
        metadata: MetadataStore,
        blobs: BlobStore,
        queue_depth: Callable[[], int] = lambda: 0,
    ) -> None:
        """`queue_depth`: the jobs in this server's ingest queue (0 where another service
        counts them: SQS)."""
        self.metadata = metadata
        self.blobs = blobs
        self.queue_depth = queue_depth

    def indexing(self, workspace_id: str) -> IndexingProgress:
        """How far the library's documents are indexed, and this server's queue."""
        counts = dict.fromkeys(DocumentStatus, 0)
        for doc in self.metadata.iter_documents(workspace_id):
            counts[doc.status] += 1
        pending = counts[DocumentStatus.PENDING] + counts[DocumentStatus.INDEXING]
        return IndexingProgress(
            status="indexing" if pending else "idle",
            pending=pending,
            queued=self.queue_depth(),
            documents=sum(counts.values()),
            completed=counts[DocumentStatus.COMPLETED],
            failed=counts[DocumentStatus.FAILED],
        )

    def has_library(self, workspace_id: str) -> bool:
        return self.metadata.get_workspace(workspace_id) is not None

    def find(self, workspace_id: str, document_id: str) -> Document | None:
        return self.metadata.get_document(workspace_id, document_id)

    def document(self, workspace_id: str, document_id: str, *, what: str = "document") -> Document:
        """NotFoundError for an unknown id and another workspace's id alike."""
        doc = self.metadata.get_document(workspace_id, document_id)
        if doc is None:
            raise NotFoundError(f"{what} {document_id} not found")
        return doc

    def at(self, workspace_id: str, path: str) -> Document | None:
        """The document at `path` (normalised, as the upload policy's `normalise_path`)."""
        return self.metadata.get_document_by_path(workspace_id, path)

    def documents(self, workspace_id: str) -> list[Document]:
        """The workspace's documents, read once (a caller may delete as it goes)."""
        return list(self.metadata.iter_documents(workspace_id))

    def of_source(self, workspace_id: str, source: str) -> list[Document]:
        """The documents `source` owns (domain/sources.py), by path."""
        return list(self.metadata.iter_source_documents(workspace_id, source))

    def files(
        self, workspace_id: str, query: DocumentQuery | None = None, *, limit: int, offset: int = 0
    ) -> FilePage:
        """One page of the files (`query`: by name, in an order; None: newest first), and
        how many match in all: aurak's listing."""
        return self.metadata.find_documents(
            workspace_id, query or DocumentQuery(), limit=limit, offset=offset
        )

    def text(self, doc: Document) -> str | None:
        """The extracted text of `doc`'s current revision (None while it has none)."""
        return stored_text(doc, self.blobs)

    def read(self, workspace_id: str, document_id: str) -> DocumentView:
        """The document, its text (its chunks joined while it has none stored) and chunks."""
        document = self.document(workspace_id, document_id)
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
        document = self.document(workspace_id, document_id)
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


def stored_text(doc: Document, blobs: BlobStore) -> str | None:
    """The extracted text of `doc`'s current revision, or None while it has none yet (it is
    still indexing, or failed). A completed revision without a text blob is a UTF-8 text file
    whose bytes were the text itself."""
    try:
        return blobs.get(text_key(doc.workspace_id, doc.id, doc.revision)).decode("utf-8")
    except NotFoundError:
        if doc.status is not DocumentStatus.COMPLETED:
            return None
    try:
        return blobs.get(doc.blob_key or "").decode("utf-8")
    except (NotFoundError, UnicodeDecodeError):
        return None
