"""aurak's knowledge base: POST /upload and /knowledge-bases (list, get, delete, clear).

Limits: a file is at most `BUNKO_MAX_FILE_BYTES` (default 50 MB; 413 above it) and of a
type Bunko parses (415 otherwise: PDF, DOCX, PPTX, XLSX, HTML, Markdown, text, CSV, TSV,
JSON); chunkSize 50–20000 and chunkOverlap 0–10000 characters, overlap below size (400).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Query, Response, UploadFile
from pydantic import BaseModel, ConfigDict

from bunko.domain import utcnow
from bunko.domain.document_query import DocumentQuery, DocumentSort
from bunko.domain.ingest_options import (
    MAX_CHUNK_OVERLAP,
    MAX_CHUNK_SIZE,
    MIN_CHUNK_SIZE,
    IngestMode,
)
from bunko.domain.sources import UPLOAD
from bunko.http.deps import KnowledgeBaseDep, Reader, Writer
from bunko.http.errors import EXISTING_HEADER, error_responses
from bunko.http.metadata_fields import (
    MAX_FILTER_TEXT,
    MAX_METADATA_TEXT,
    form_metadata,
    given_filter,
)
from bunko.operations.aurak import Deleted, KnowledgeBaseFile
from bunko.services.ingest import Upload

router = APIRouter(tags=["knowledge-base"], responses=error_responses(401, 403))


class MetadataBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metadata: dict[str, Any]


class Cleared(BaseModel):
    message: str
    deleted: int


@router.post(
    "/upload",
    status_code=201,
    response_model=KnowledgeBaseFile,
    responses=error_responses(400, 404, 409, 413, 415),
)
def upload(
    file: Annotated[UploadFile, File(description="The file to index.")],
    principal: Writer,
    response: Response,
    knowledge_base: KnowledgeBaseDep,
    chunkSize: Annotated[int | None, Form(ge=MIN_CHUNK_SIZE, le=MAX_CHUNK_SIZE)] = None,
    chunkOverlap: Annotated[int | None, Form(ge=0, le=MAX_CHUNK_OVERLAP)] = None,
    embeddingModelId: Annotated[str | None, Form(max_length=100)] = None,
    mode: Annotated[IngestMode, Form()] = "fast",
    replaceId: Annotated[
        str | None,
        Form(
            max_length=100,
            description="The id of a file this upload replaces (a new revision of it). "
            "Without it every upload is a new file, even one named like another "
            "(it is stored as `name (2).ext`); the same bytes under the same name again "
            "return the file that holds them.",
        ),
    ] = None,
    category: Annotated[
        str | None,
        Form(
            max_length=100,
            description="A label search can filter by (a new file; a replacement keeps its own).",
        ),
    ] = None,
    metadata: Annotated[
        str | None,
        Form(
            max_length=MAX_METADATA_TEXT,
            description="(Bunko) A JSON object of key → value (a string, a number, an ISO 8601 "
            "date or a list of strings) that search can filter by; a replacement without it "
            "keeps the file's own.",
        ),
    ] = None,
) -> KnowledgeBaseFile:
    """Store the original and queue indexing: the record comes back `pending`, then moves
    through `indexing` to `completed` or `failed` (with `error`). The same bytes under the
    same name again return the file that holds them, with `X-Bunko-Existing: true`."""
    started = utcnow()
    doc = knowledge_base.upload(
        Upload(
            principal.workspace_id,
            file.file.read(),
            name=file.filename or "",
            replaces=replaceId or None,
            mime=file.content_type,
            category=category,
            chunk_size=chunkSize,
            chunk_overlap=chunkOverlap,
            source=UPLOAD,
            mode=mode,
            embedding_model_id=embeddingModelId or None,
            metadata=form_metadata(metadata),
        )
    )
    if replaceId is None and doc.created_at < started:  # not made by this request
        response.headers[EXISTING_HEADER] = "true"
    return KnowledgeBaseFile.of(doc)


@router.get("/knowledge-bases", response_model=list[KnowledgeBaseFile])
def list_files(
    principal: Reader,
    knowledge_base: KnowledgeBaseDep,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=10000)] = 1000,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    q: Annotated[
        str | None,
        Query(max_length=200, description="Only files whose name or path holds this (any case)."),
    ] = None,
    sort: Annotated[
        DocumentSort, Query(description="date (uploaded), name, size or type (MIME type).")
    ] = "date",
    order: Annotated[
        Literal["asc", "desc"] | None,
        Query(description="Default: desc for date and size, asc for name and type."),
    ] = None,
    filter: Annotated[
        str | None,
        Query(
            max_length=MAX_FILTER_TEXT,
            description="(Bunko) Only files whose metadata passes this filter (JSON; docs/rest.md "
            '"Metadata"), e.g. {"equals": {"key": "team", "value": "legal"}}.',
        ),
    ] = None,
) -> list[KnowledgeBaseFile]:
    """The workspace's files, newest first unless `sort`/`order` say otherwise; the list is
    the same array as ever, and `X-Total-Count` says how many files match in all (page with
    `offset` + `limit` while below it)."""
    descending = order == "desc" if order else sort in ("date", "size")
    query = DocumentQuery(
        name=q, sort=sort, descending=descending, filter=given_filter(filter, "filter")
    )
    found = knowledge_base.list(principal.workspace_id, query, limit=limit, offset=offset)
    response.headers["X-Total-Count"] = str(found.total)
    return [KnowledgeBaseFile.of(d) for d in found.documents]  # options on each record


# Declared before /knowledge-bases/{file_id}, which would otherwise take "clear" for an id.
@router.delete("/knowledge-bases/clear", response_model=Cleared)
def clear(principal: Writer, knowledge_base: KnowledgeBaseDep) -> Cleared:
    """Delete every file of the workspace, with chunks, index entries and blobs."""
    count = knowledge_base.clear(principal.workspace_id)
    return Cleared(message="Knowledge base cleared", deleted=count)


@router.get(
    "/knowledge-bases/{file_id}",
    response_model=KnowledgeBaseFile,
    responses=error_responses(404),
)
def get_file(
    file_id: str, principal: Reader, knowledge_base: KnowledgeBaseDep
) -> KnowledgeBaseFile:
    return KnowledgeBaseFile.of(knowledge_base.get(principal.workspace_id, file_id))


@router.put(
    "/knowledge-bases/{file_id}/metadata",
    response_model=KnowledgeBaseFile,
    responses=error_responses(400, 404),
)
def set_metadata(
    file_id: str, body: MetadataBody, principal: Writer, knowledge_base: KnowledgeBaseDep
) -> KnowledgeBaseFile:
    """(Bunko) Replace the file's metadata; its search entries answer to it at once (the file
    is not read again). `{"metadata": {}}` removes it all."""
    doc = knowledge_base.set_metadata(principal.workspace_id, file_id, body.metadata)
    return KnowledgeBaseFile.of(doc)


@router.delete("/knowledge-bases/{file_id}", response_model=Deleted, responses=error_responses(404))
def delete_file(file_id: str, principal: Writer, knowledge_base: KnowledgeBaseDep) -> Deleted:
    """Delete the file, its chunks, its index entries and its stored original."""
    doc = knowledge_base.delete(principal.workspace_id, file_id)
    return Deleted(message="File deleted", id=doc.id)
