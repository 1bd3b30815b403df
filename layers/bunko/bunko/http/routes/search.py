"""GET /search (hybrid search over the caller's workspace), the categories it filters by, and
a file's chunks (what a search hit or a chat citation opens). Not in aurak's API: the web
app needs them; the MCP tools search_text, list_categories and get_document do the same."""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import APIRouter, Query
from pydantic import BaseModel

from bunko.http.deps import Reader, ServicesDep
from bunko.http.errors import error_responses
from bunko.services.search import SearchItem, SearchOptions

router = APIRouter(tags=["search"], responses=error_responses(401, 403))


class SearchResponse(BaseModel):
    items: list[SearchItem]  # the service's hits as they are (pydantic reads the dataclass)
    vector_search_used: bool


class Categories(BaseModel):
    categories: list[str]


class ChunkOut(BaseModel):
    id: str
    index: int
    content: str
    start: int
    end: int
    page: int | None


class FileChunks(BaseModel):
    id: str
    name: str
    chunks: list[ChunkOut]


@router.get("/search", response_model=SearchResponse, responses=error_responses(400))
async def search(
    principal: Reader,
    services: ServicesDep,
    q: Annotated[str, Query(min_length=1, max_length=2000, description="What to find.")],
    category: Annotated[str | None, Query(max_length=100)] = None,
    limit: Annotated[int | None, Query(ge=1, le=100)] = None,
) -> SearchResponse:
    """Hybrid (meaning + keyword) search, one hit per document with its best passage.
    `limit` left out: the workspace's saved setting."""
    options = SearchOptions(limit=limit, category=category or None)
    result = await anyio.to_thread.run_sync(
        services.search.search, principal.workspace_id, q, options
    )
    return SearchResponse.model_validate(result.to_dict())


@router.get("/search/categories", response_model=Categories)
def categories(principal: Reader, services: ServicesDep) -> Categories:
    return Categories(categories=services.items.list_categories(principal.workspace_id))


@router.get(
    "/knowledge-bases/{file_id}/chunks", response_model=FileChunks, responses=error_responses(404)
)
def file_chunks(file_id: str, principal: Reader, services: ServicesDep) -> FileChunks:
    """A file's chunks in reading order, with their character offsets and page."""
    view = services.items.get_document(principal.workspace_id, file_id)
    chunks = [
        ChunkOut(id=c.id, index=c.index, content=c.content, start=c.start, end=c.end, page=c.page)
        for c in view.chunks
    ]
    return FileChunks(id=view.document.id, name=view.document.name, chunks=chunks)
