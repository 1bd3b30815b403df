"""GET /search (hybrid search over the caller's workspace), the categories it filters by, and
a file's chunks (what a search hit or a chat citation opens). Not in aurak's API: the web
app needs them; the MCP tools search_text, list_categories and get_document do the same."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from bunko.domain.highlights import matched_spans
from bunko.http.deps import Reader, ServicesDep
from bunko.http.errors import error_responses
from bunko.http.metadata_fields import MAX_FILTER_TEXT, given_filter
from bunko.operations.telosdb import ChunkOutput, SearchHit
from bunko.services.bounds import QUERY_CHARS, RESULTS
from bunko.services.library import CHUNK_PAGE_SIZE, MAX_CHUNK_PAGE_SIZE, MAX_CHUNK_POSITION
from bunko.services.search import SearchOptions

router = APIRouter(tags=["search"], responses=error_responses(401, 403))


class HighlightedHit(SearchHit):
    """TelosDB's search hit (the one MCP's search_text answers with) and what to mark in it."""

    highlights: list[tuple[int, int]] = Field(
        default_factory=list,
        description="(Bunko) [start, end) of each run of `content` the query matched by "
        "keyword (whole words, stop words left out), in characters (code points).",
    )


class SearchResponse(BaseModel):
    items: list[HighlightedHit]
    vector_search_used: bool


class Categories(BaseModel):
    categories: list[str]


class MetadataKey(BaseModel):
    key: str
    types: list[Literal["string", "number", "date", "list"]]
    values: list[str] = Field(description="Its most common text values, at most 50.")


class MetadataKeys(BaseModel):
    keys: list[MetadataKey]


class ChunkOut(ChunkOutput):
    """A chunk as MCP's get_document gives it, and the page it ends on."""

    pageEnd: int | None  # camelCase, as the web app has always read it


class FileChunks(BaseModel):
    id: str
    name: str
    chunks: list[ChunkOut]
    total: int  # the file's chunks, all pages together
    offset: int  # the first chunk's position in reading order: the next page is offset + limit
    limit: int


@router.get("/search", response_model=SearchResponse, responses=error_responses(400))
async def search(
    principal: Reader,
    services: ServicesDep,
    q: Annotated[str, Query(min_length=1, max_length=QUERY_CHARS, description="What to find.")],
    category: Annotated[str | None, Query(max_length=100)] = None,
    limit: Annotated[int | None, Query(ge=1, le=RESULTS)] = None,
    filter: Annotated[
        str | None,
        Query(
            max_length=MAX_FILTER_TEXT,
            description="(Bunko) Only files whose metadata passes this filter (JSON; "
            'docs/rest.md "Metadata").',
        ),
    ] = None,
    source: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=200,
            description="(Bunko) Only files this source owns: a source's name (GET /sources), "
            "connector:<id>, or a door's own (upload, agent, drop, …); 400 for none of these.",
        ),
    ] = None,
) -> SearchResponse:
    """Hybrid (meaning + keyword) search, one hit per document with its best passage.
    `limit` left out: the workspace's saved setting."""
    options = SearchOptions(
        limit=limit, category=category or None, metadata=given_filter(filter), source=source
    )

    def run() -> dict[str, Any]:
        found = services.search.search(principal.workspace_id, q, options).to_dict()
        for item in found["items"]:  # what to mark in the passage: the words it matched by
            item["highlights"] = matched_spans(item["content"], q)
        return found

    return SearchResponse.model_validate(await anyio.to_thread.run_sync(run))


@router.get("/search/categories", response_model=Categories)
def categories(principal: Reader, services: ServicesDep) -> Categories:
    return Categories(categories=services.library.list_categories(principal.workspace_id))


@router.get("/search/metadata-keys", response_model=MetadataKeys)
def metadata_keys(principal: Reader, services: ServicesDep) -> MetadataKeys:
    """(Bunko) The metadata keys the library's files use: the keys a filter can name, each
    with its value types and its most common values."""
    keys = services.library.metadata_keys(principal.workspace_id)
    return MetadataKeys(keys=[MetadataKey(**k) for k in keys])


@router.get(
    "/knowledge-bases/{file_id}/chunks",
    response_model=FileChunks,
    responses=error_responses(400, 404),
)
def file_chunks(
    file_id: str,
    principal: Reader,
    services: ServicesDep,
    limit: Annotated[
        int, Query(ge=1, le=MAX_CHUNK_PAGE_SIZE, description="Chunks per page.")
    ] = CHUNK_PAGE_SIZE,
    offset: Annotated[
        int | None,
        Query(ge=0, le=MAX_CHUNK_POSITION, description="The first chunk's position (from 0)."),
    ] = None,
    chunk: Annotated[
        int | None,
        Query(
            ge=0,
            le=MAX_CHUNK_POSITION,
            description="Instead of `offset`: the page holding the chunk with this index.",
        ),
    ] = None,
) -> FileChunks:
    """A page of a file's chunks in reading order, with their character offsets and page;
    `total`, `offset` and `limit` lead to the other pages (a Lambda response stops at 6 MB)."""
    view = services.library.chunk_page(
        principal.workspace_id, file_id, limit=limit, offset=offset, chunk=chunk
    )
    chunks = [
        ChunkOut(
            id=c.id,
            index=c.index,
            content=c.content,
            start=c.start,
            end=c.end,
            page=c.page,
            pageEnd=c.page_end,
        )
        for c in view.chunks
    ]
    return FileChunks(
        id=view.document.id,
        name=view.document.name,
        chunks=chunks,
        total=view.total,
        offset=view.offset,
        limit=view.limit,
    )
