"""A document's chunks: its original read, parsed, its text stored (unless the original is
that text), and the text chunked (the library reads the stored text back: stored_text)."""

from __future__ import annotations

from bunko.chunking import chunk_text
from bunko.domain import Chunk, Document, chunk_id_for
from bunko.errors import BunkoError, NotFoundError
from bunko.parsing import parse
from bunko.ports import BlobStore, MetadataStore
from bunko.services.library import text_key


def parse_and_chunk(
    doc: Document, *, blobs: BlobStore, metadata: MetadataStore, mode: str = "fast"
) -> list[Chunk]:
    """The chunks of `doc`'s revision; its extracted text is kept in the blob store, unless
    the original already is that text (see `stored_text`). Raises BunkoError with a readable
    message when the file gives no text or was never fully received, NotFoundError when it
    was deleted or replaced meanwhile."""
    original = _original(doc, blobs, metadata)
    parsed = parse(original, filename=doc.name, mime=doc.mime, mode=mode)
    text = parsed.text.encode("utf-8")
    if text != original:  # a UTF-8 text file is not stored twice (a blob write a document)
        blobs.put(
            text_key(doc.workspace_id, doc.id, doc.revision),
            text,
            content_type="text/plain; charset=utf-8",
        )
    pieces = chunk_text(
        parsed.text,
        chunk_size=doc.chunk_size,
        chunk_overlap=doc.chunk_overlap,
        pages=parsed.pages or None,
    )
    if not pieces:
        raise BunkoError(f"no text could be extracted from {doc.name}")
    return [
        Chunk(
            id=chunk_id_for(doc.id, doc.revision, i),
            document_id=doc.id,
            workspace_id=doc.workspace_id,
            revision=doc.revision,
            index=i,
            content=p.content,
            start=p.start,
            end=p.end,
            page=p.page,
            page_breaks=p.page_breaks,
        )
        for i, p in enumerate(pieces)
    ]


def _original(doc: Document, blobs: BlobStore, metadata: MetadataStore) -> bytes:
    try:
        return blobs.get(doc.blob_key or "")
    except NotFoundError:
        current = metadata.get_document(doc.workspace_id, doc.id)
        if current is None or current.revision != doc.revision:
            raise  # deleted or replaced meanwhile
        # The process that received the file stopped before it stored the bytes.
        raise BunkoError(f"the file {doc.name} was never fully received; send it again") from None
