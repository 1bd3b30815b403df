"""TelosDB's dialect (snake_case): the one definition of each shape TelosDB's API speaks.

MCP's tools answer with these (each tool's `structuredContent`, advertised as its output
schema); REST's TelosDB-shaped routes (GET /search, /settings, /indexing_status) answer with
the same classes, so one shape is described once. On bunko.operations' Output: built with
`extra="ignore"` so a service adding a field never breaks a result, and advertised with
`additionalProperties: false` because only declared fields are ever dumped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bunko.domain import Chunk, Document
from bunko.domain.ingest_options import StatusName
from bunko.domain.metadata import shown
from bunko.operations.models import Count, Id, Output
from bunko.services.bounds import RESULTS

RevisionNo = Annotated[int, Field(ge=1)]


class SearchHit(Output):
    """A hit as SearchItem.to_dict gives it (TelosDB's search_text item, plus its pages)."""

    id: Id = Field(description="The item (chunk) id; the best chunk when grouped.")
    document_id: Id
    path: str
    mime: str
    category: str | None
    content: str
    similarity: float = Field(ge=0.0, le=1.0)
    vector_score: float
    text_score: float
    chunk_index: Count
    name: str
    engines: list[Literal["keyword", "vector"]] = Field(
        description="The engines that found it: keyword alone while its file is still indexing."
    )
    # Required: every hit carries its pages (None for a format without them).
    page: int | None = Field(
        description="The page (PDF), slide (pptx) or sheet (xlsx) the passage starts on."
    )
    page_end: int | None = Field(description="The page it ends on.")
    metadata: dict[str, Any] = Field(description="Its document's metadata.")


class SearchTextOutput(Output):
    items: list[SearchHit] = Field(description="Always an array; empty when nothing matched.")
    vector_search_used: bool
    error: str | None = Field(None, description="Present only when the search failed.")


class ItemOutput(Output):
    id: Id
    document_id: Id
    path: str
    mime: str
    category: str | None
    content: str
    chunk_index: Count
    revision: RevisionNo
    start: Count
    end: Count
    page: int | None
    page_end: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict, description="Its document's metadata.")

    @classmethod
    def of(cls, chunk: Chunk, doc: Document) -> ItemOutput:
        return cls(
            id=chunk.id,
            document_id=doc.id,
            path=doc.path,
            mime=doc.mime,
            category=doc.category,
            content=chunk.content,
            chunk_index=chunk.index,
            revision=chunk.revision,
            start=chunk.start,
            end=chunk.end,
            page=chunk.page,
            page_end=chunk.page_end,
            metadata=shown(doc.metadata),
        )


class DeletedItemOutput(Output):
    deleted: bool
    id: Id
    document_id: Id


class DocumentSummary(Output):
    id: Id
    path: str
    name: str
    mime: str
    category: str | None
    chunk_count: Count
    size: Count
    status: StatusName
    error: str | None
    revision: RevisionNo
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: str = Field(
        description="The source that owns it: upload, presign (a large upload), agent, cli,"
        " drop (the drop folder), s3 (S3 drops), api, or connector:<id>; a source that"
        " mirrors a place deletes only its own documents."
    )

    @classmethod
    def of(cls, doc: Document) -> DocumentSummary:
        return cls(
            id=doc.id,
            path=doc.path,
            name=doc.name,
            mime=doc.mime,
            category=doc.category,
            chunk_count=doc.chunk_count,
            size=doc.size,
            status=str(doc.status),
            error=doc.error,
            revision=doc.revision,
            created_at=doc.created_at,
            updated_at=doc.updated_at,
            metadata=shown(doc.metadata),
            source=doc.source,
        )


class ListDocumentsOutput(Output):
    items: list[DocumentSummary] = Field(description="This page; empty past the last page.")
    total_count: Count
    total_pages: Count = Field(description="0 when there are no documents.")
    page: int = Field(ge=1)


class ListCategoriesOutput(Output):
    categories: list[str] = Field(description="Distinct, sorted.")


class MetadataKeyOutput(Output):
    key: str
    types: list[Literal["string", "number", "date", "list"]]
    values: list[str] = Field(description="Its most common text values, at most 50.")


class MetadataKeysOutput(Output):
    keys: list[MetadataKeyOutput] = Field(description="Sorted by key.")


class DocumentCountOutput(Output):
    count: Count


class ChunkOutput(Output):
    id: Id
    index: Count
    content: str
    start: Count
    end: Count
    page: int | None


class GetDocumentOutput(DocumentSummary):
    content: str = Field(description="The document's full extracted text.")
    chunks: list[ChunkOutput]


class DeletedDocumentOutput(Output):
    deleted: bool
    id: Id
    path: str
    chunk_count: Count


class AddedOutput(Output):
    document_id: Id
    path: str
    mime: str
    category: str | None
    status: StatusName = Field(description="completed, or pending if indexing is still running.")
    revision: RevisionNo
    chunk_count: Count
    item_ids: list[Id] = Field(description="The ids of the stored items (chunks).")
    error: str | None = None


class RetrainOutput(Output):
    indexed_chunks: Count
    retrained: bool = Field(description="True when the LSA embedder was refitted.")
    embedder: str | None
    seconds: float = Field(ge=0)


# TelosDB's auxiliary HTTP API (spec §6), served by REST's http/routes/telosdb.py.


class MonitorPath(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: Annotated[str, Field(min_length=1, max_length=4096)]
    category: Annotated[str | None, Field(max_length=200)] = None


class TelosSettings(BaseModel):
    monitor_paths: list[MonitorPath]
    run_on_login: bool
    min_score: float
    limit: int


class TelosSettingsUpdate(BaseModel):
    """Any subset. monitor_paths entries may be plain paths (TelosDB) or {path, category};
    changing them needs an admin. Saved settings apply at once, without a restart."""

    model_config = ConfigDict(extra="forbid")
    monitor_paths: Annotated[list[MonitorPath | str], Field(max_length=32)] | None = None
    run_on_login: bool | None = None
    min_score: Annotated[float | None, Field(ge=0, le=1)] = None
    limit: Annotated[int | None, Field(ge=1, le=RESULTS)] = None


class IndexingStatus(BaseModel):
    status: Literal["idle", "indexing"]
    pending: int  # this workspace's documents waiting or being indexed
    queued: int  # jobs in the server's ingest queue (all workspaces)
    documents: int
    completed: int
    failed: int
