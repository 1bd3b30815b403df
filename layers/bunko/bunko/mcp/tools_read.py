"""The read tools: thin typed wrappers over the search and items services."""

from __future__ import annotations

from bunko.domain.auth import SCOPE_READ
from bunko.domain.metadata import parse_filter
from bunko.mcp.inputs import (
    DocumentIdInput,
    ItemIdInput,
    ListDocumentsInput,
    NoInput,
    SearchTextInput,
)
from bunko.mcp.registry import ToolContext, ToolSpec, tool
from bunko.operations.telosdb import (
    ChunkOutput,
    DocumentCountOutput,
    DocumentSummary,
    GetDocumentOutput,
    ItemOutput,
    ListCategoriesOutput,
    ListDocumentsOutput,
    MetadataKeyOutput,
    MetadataKeysOutput,
    SearchTextOutput,
)
from bunko.services.search import SearchOptions

READ = {"read_only": True, "destructive": False, "idempotent": True}


@tool(title="Search the knowledge base", scope=SCOPE_READ, core=True, **READ)
def search_text(ctx: ToolContext, args: SearchTextInput) -> SearchTextOutput:
    """Hybrid (meaning + keyword) search over the knowledge base; Japanese words are found
    inside running text. Returns `items` (always an array: empty for no match or an empty
    query), each with id, document_id, path, mime, category, content and a similarity in
    [0, 1] (plus vector_score and text_score); with group_by_document (default) a document's
    matching chunks are joined into one result. `vector_search_used` tells whether the
    meaning-based half ran. A failure is reported in `error`, never as a tool error.
    Use list_categories for the values `category` accepts, list_metadata_keys for the keys
    `filter` can name, list_sources for the names `source` accepts."""
    given = args.model_fields_set  # what the agent left out, the search service fills in
    options = SearchOptions(
        limit=args.limit if "limit" in given else None,
        min_score=args.min_score if "min_score" in given else None,
        group_by_document=args.group_by_document,
        category=args.category or None,
        metadata=parse_filter(args.filter),  # a bad filter is the agent's error, not a miss
        # a name that is no source here is the agent's error too, not a miss
        source=ctx.services.search.named_source(ctx.workspace_id, args.source)
        if args.source
        else None,
    )
    result = ctx.services.search.search_safely(ctx.workspace_id, args.content, options)
    return SearchTextOutput.model_validate(result.to_dict())


@tool(title="Read an item", scope=SCOPE_READ, core=True, **READ)
def get_item_by_id(ctx: ToolContext, args: ItemIdInput) -> ItemOutput:
    """One item (a chunk of a document) by id: its text, its document's path, mime and
    category, and where it sits in the document (chunk_index, character offsets, page)."""
    view = ctx.items.get_item(ctx.workspace_id, str(args.id))
    return ItemOutput.of(view.chunk, view.document)


@tool(title="List documents", scope=SCOPE_READ, core=True, **READ)
def list_documents(ctx: ToolContext, args: ListDocumentsInput) -> ListDocumentsOutput:
    """Documents, newest first, one page at a time: `items` (id, path, name, mime, category,
    chunk_count, status, ...), `total_count`, `total_pages` and `page`. Pages start at 1; a
    page past the end returns `items: []`. Optionally only one category, or only documents
    whose metadata passes `filter`."""
    page = ctx.library.list_documents(
        ctx.workspace_id,
        limit=args.limit,
        page=args.page,
        category=args.category or None,
        metadata=parse_filter(args.filter),
    )
    return ListDocumentsOutput(
        items=[DocumentSummary.of(d) for d in page.items],
        total_count=page.total_count,
        total_pages=page.total_pages,
        page=page.page,
    )


@tool(title="List categories", scope=SCOPE_READ, core=True, **READ)
def list_categories(ctx: ToolContext, args: NoInput) -> ListCategoriesOutput:
    """The distinct category names set on documents, sorted: the values search_text's and
    list_documents' `category` filter accepts."""
    return ListCategoriesOutput(categories=ctx.library.list_categories(ctx.workspace_id))


@tool(title="List metadata keys", scope=SCOPE_READ, **READ)
def list_metadata_keys(ctx: ToolContext, args: NoInput) -> MetadataKeysOutput:
    """The metadata keys documents carry, each with its value types (string, number, date,
    list) and its most common values: the keys search_text's, ask's and list_documents'
    `filter` can name."""
    return MetadataKeysOutput(
        keys=[MetadataKeyOutput(**k) for k in ctx.library.metadata_keys(ctx.workspace_id)]
    )


@tool(title="Count documents", scope=SCOPE_READ, **READ)
def get_document_count(ctx: ToolContext, args: NoInput) -> DocumentCountOutput:
    """The number of documents in the knowledge base."""
    return DocumentCountOutput(count=ctx.library.count_documents(ctx.workspace_id))


@tool(title="Read a document", scope=SCOPE_READ, core=True, **READ)
def get_document(ctx: ToolContext, args: DocumentIdInput) -> GetDocumentOutput:
    """A document by id: its metadata, its full extracted text (`content`) and its items
    (`chunks`, in reading order, each with its id for get_item_by_id or update_item)."""
    view = ctx.library.read(ctx.workspace_id, str(args.id))
    summary = DocumentSummary.of(view.document).model_dump()
    return GetDocumentOutput(
        **summary,
        content=view.text,
        chunks=[
            ChunkOutput(
                id=c.id, index=c.index, content=c.content, start=c.start, end=c.end, page=c.page
            )
            for c in view.chunks
        ],
    )


READ_TOOLS: tuple[ToolSpec, ...] = (
    search_text,
    get_item_by_id,
    list_documents,
    list_categories,
    list_metadata_keys,
    get_document_count,
    get_document,
)
