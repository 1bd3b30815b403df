"""The write tools: add, edit and delete knowledge; rebuild the indexes; add a local file."""

from __future__ import annotations

import time
from pathlib import Path

from bunko.domain import Document, DocumentStatus
from bunko.domain.auth import SCOPE_ADMIN, SCOPE_WRITE
from bunko.domain.metadata import check_metadata, given_metadata
from bunko.domain.sources import AGENT
from bunko.errors import BunkoError, NotFoundError
from bunko.mcp.inputs import (
    AddFileInput,
    AddItemTextInput,
    DocumentIdInput,
    ItemIdInput,
    NoInput,
    SetMetadataInput,
    UpdateItemInput,
)
from bunko.mcp.registry import ToolContext, ToolSpec, tool
from bunko.operations.telosdb import (
    AddedOutput,
    DeletedDocumentOutput,
    DeletedItemOutput,
    DocumentSummary,
    ItemOutput,
    RetrainOutput,
)
from bunko.services.ingest import Upload

# How long add_item_text / add_file wait for indexing before answering `pending`.
INDEX_WAIT_SECONDS = 60.0


@tool(
    title="Add text",
    scope=SCOPE_WRITE,
    core=True,
    # Adding to an existing path replaces its current text (older revisions are kept).
    read_only=False,
    destructive=True,
    idempotent=True,
)
def add_item_text(ctx: ToolContext, args: AddItemTextInput) -> AddedOutput:
    """Store text as a document at `path` (a unique logical path), chunk and index it, and
    return its document_id and item ids once it is searchable. `mime` is guessed from the
    path's extension when omitted (text/plain otherwise). Sending the same text to the same
    path again changes nothing; different text at an existing path replaces it as a new
    revision. `content` holds at most 1,000,000 characters."""
    mime = ctx.services.uploads.text_mime(args.path, args.mime)
    doc = ctx.services.ingest.submit_text(
        ctx.workspace_id,
        path=args.path,
        content=args.content,
        mime=mime,
        category=args.category,
        source=AGENT,
        metadata=given_metadata(args.metadata),
    )
    return _added(ctx, doc)


@tool(title="Edit an item", scope=SCOPE_WRITE, read_only=False, destructive=True, idempotent=True)
def update_item(ctx: ToolContext, args: UpdateItemInput) -> ItemOutput:
    """Replace the text of one item (chunk) by id and re-embed and re-index it; the id stays
    the same. `content` holds at most 50,000 characters."""
    view = ctx.items.update_item(ctx.workspace_id, str(args.id), args.content)
    return ItemOutput.of(view.chunk, view.document)


@tool(title="Delete an item", scope=SCOPE_WRITE, read_only=False, destructive=True, idempotent=True)
def delete_item(ctx: ToolContext, args: ItemIdInput) -> DeletedItemOutput:
    """Delete one item (chunk) by id from the knowledge base and its indexes; the rest of its
    document stays."""
    view = ctx.items.delete_item(ctx.workspace_id, str(args.id))
    return DeletedItemOutput(deleted=True, id=view.chunk.id, document_id=view.document.id)


@tool(
    title="Delete a document",
    scope=SCOPE_WRITE,
    read_only=False,
    destructive=True,
    idempotent=True,
)
def delete_document(ctx: ToolContext, args: DocumentIdInput) -> DeletedDocumentOutput:
    """Delete a document by id with all its items, its stored file and its index entries."""
    doc = ctx.services.ingest.delete_document(ctx.workspace_id, str(args.id))
    return DeletedDocumentOutput(
        deleted=True, id=doc.id, path=doc.path, chunk_count=doc.chunk_count
    )


@tool(
    title="Rebuild the indexes",
    scope=SCOPE_ADMIN,
    # The indexes are derived data: rebuilding them loses no knowledge.
    read_only=False,
    destructive=False,
    idempotent=True,
)
def lsa_retrain(ctx: ToolContext, args: NoInput) -> RetrainOutput:
    """RE-INDEX: rebuild the keyword and vector indexes of the whole installation from the
    stored documents; with the LSA embedder, retrain it on every item first. Needs the
    admin scope. Searches may return fewer results while it runs."""
    started = time.perf_counter()
    services = ctx.services
    count = services.pipeline.reindex(None, retrain=True)
    return RetrainOutput(
        indexed_chunks=count,
        retrained=services.status.retrains,
        embedder=services.status.model_name,
        seconds=round(time.perf_counter() - started, 3),
    )


@tool(
    title="Add a local file",
    scope=SCOPE_WRITE,
    stdio_only=True,
    # It reads this machine's file system, outside the knowledge base.
    read_only=False,
    destructive=True,
    idempotent=True,
    open_world=True,
)
def add_file(ctx: ToolContext, args: AddFileInput) -> AddedOutput:
    """Ingest a file from this machine by its file-system path (PDF, Word, PowerPoint, Excel,
    HTML, text, ...): parse, chunk and index it, and return its document_id and item ids.
    Only over stdio, since an HTTP server cannot see the caller's files."""
    file = Path(args.file).expanduser()
    if not file.is_file():
        raise NotFoundError(f"no readable file at {args.file}")
    uploads = ctx.services.uploads
    uploads.size(file.stat().st_size, what=args.file)  # before reading it into memory
    uploads.file_type(file.name, None)
    upload = Upload(
        ctx.workspace_id,
        file.read_bytes(),
        path=args.path or file.resolve().as_posix(),
        category=args.category,
        source=AGENT,
        metadata=given_metadata(args.metadata),
    )
    doc = ctx.services.ingest.submit(upload)
    return _added(ctx, doc)


@tool(
    title="Set a document's metadata",
    scope=SCOPE_WRITE,
    read_only=False,
    destructive=True,
    idempotent=True,
)
def set_document_metadata(ctx: ToolContext, args: SetMetadataInput) -> DocumentSummary:
    """Replace a document's metadata (key → a string, a number, an ISO 8601 date or a list
    of strings; {} removes it all). Searches filter by it at once; the file is not re-read."""
    doc = ctx.services.ingest.set_metadata(
        ctx.workspace_id, str(args.id), check_metadata(args.metadata)
    )
    return DocumentSummary.of(doc)


def _added(ctx: ToolContext, doc: Document) -> AddedOutput:
    doc = ctx.library.wait_until_indexed(ctx.workspace_id, doc.id, timeout=INDEX_WAIT_SECONDS)
    if doc.status is DocumentStatus.FAILED:
        ctx.services.ingest.discard_failed_new(doc)
        raise BunkoError(f"{doc.path} could not be indexed: {doc.error}")
    chunks = ctx.library.chunks(ctx.workspace_id, doc.id)
    return AddedOutput(
        document_id=doc.id,
        path=doc.path,
        mime=doc.mime,
        category=doc.category,
        status=str(doc.status),
        revision=doc.revision,
        chunk_count=len(chunks),
        item_ids=[c.id for c in chunks],
    )


WRITE_TOOLS: tuple[ToolSpec, ...] = (
    add_item_text,
    update_item,
    delete_item,
    delete_document,
    lsa_retrain,
    add_file,
    set_document_metadata,
)
