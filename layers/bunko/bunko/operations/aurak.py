"""aurak's dialect (camelCase): the one definition of each shape aurak's API speaks, shared
by the REST routers that answer in it. MCP speaks TelosDB's dialect (operations/telosdb.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from bunko.domain import Document
from bunko.domain.accounts import User
from bunko.domain.audit import AuditEvent
from bunko.domain.ingest_options import StatusName
from bunko.domain.metadata import shown
from bunko.operations.models import Output
from bunko.services.chat import Source

# Bounds for the raw input; the services apply the finer rules (and name the field).
USERNAME_FIELD = Field(min_length=1, max_length=64)
PASSWORD_FIELD = Field(min_length=1, max_length=256)


class UserPublic(BaseModel):
    id: str
    username: str
    isAdmin: bool
    createdAt: datetime

    @classmethod
    def of(cls, user: User) -> UserPublic:
        return cls(
            id=user.id, username=user.username, isAdmin=user.is_admin, createdAt=user.created_at
        )


class Message(BaseModel):
    message: str


class Deleted(BaseModel):
    message: str
    id: str


class KnowledgeBaseFile(BaseModel):
    id: str
    name: str
    originalName: str
    size: int
    mimetype: str
    status: StatusName
    error: str | None
    chunkSize: int
    chunkOverlap: int
    chunkCount: int
    mode: str
    embeddingModelId: str | None
    revision: int
    category: str | None
    metadata: dict[str, Any]
    # Added to aurak's shape (issue 48): the source that owns the file (domain/sources.py).
    source: str
    createdAt: datetime
    updatedAt: datetime

    @classmethod
    def of(cls, doc: Document) -> KnowledgeBaseFile:
        return cls(
            id=doc.id,
            name=doc.path,
            originalName=doc.name,
            size=doc.size,
            mimetype=doc.mime,
            status=doc.status.value,
            error=doc.error,
            chunkSize=doc.chunk_size,
            chunkOverlap=doc.chunk_overlap,
            chunkCount=doc.chunk_count,
            mode=doc.mode,
            embeddingModelId=doc.embedding_model_id,
            revision=doc.revision,
            category=doc.category,
            metadata=shown(doc.metadata),
            source=doc.source,
            createdAt=doc.created_at,
            updatedAt=doc.updated_at,
        )


class SourceQuote(Output):
    quote: str = Field(description="A sentence of `content` the answer quotes or rests on.")
    quoteStart: int = Field(ge=0, description="Where it starts in `content` (code points).")
    quoteEnd: int = Field(ge=0)


class ChatSource(Output):
    """A numbered source of an answer, the same fields at every door (REST's SSE `sources`,
    /v1's `sources`, MCP ask's `sources`), so a client can pass sources between them."""

    fileName: str  # camelCase: the sources' one spelling (aurak's chat contract)
    content: str
    score: float
    chunkIndex: int = Field(ge=0)
    documentId: str
    page: int | None = Field(
        description="The page (PDF), slide (pptx) or sheet (xlsx) of the quoted sentence; "
        "null when the file has no pages."
    )
    pageEnd: int | None = Field(description="The passage's last page.")
    quote: str | None = Field(description="The sentence of `content` the answer rests on.")
    quoteStart: int | None = Field(
        description="Where `quote` starts in `content` (characters, i.e. code points)."
    )
    quoteEnd: int | None
    quotes: list[SourceQuote] = Field(
        description="Every sentence of `content` the answer rests on, in the answer's order "
        "(the first is `quote`); empty when `quote` is null."
    )

    @classmethod
    def of(cls, source: Source) -> ChatSource:
        return cls(
            fileName=source.file_name,
            content=source.content,
            score=source.score,
            chunkIndex=source.chunk_index,
            documentId=source.document_id,
            page=source.page,
            pageEnd=source.page_end,
            quote=source.quote,
            quoteStart=source.quote_start,
            quoteEnd=source.quote_end,
            quotes=[
                SourceQuote(quote=q.text, quoteStart=q.start, quoteEnd=q.end) for q in source.quotes
            ],
        )

    def body(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class AuditEntry(BaseModel):
    """One event of the audit trail (GET /audit): who, what, where, when, how it ended."""

    id: str
    at: datetime
    action: str = Field(
        description="The route (`DELETE /knowledge-bases/{file_id}`), the MCP tool "
        "(`mcp:delete_document`) or `sign_in`."
    )
    outcome: Literal["ok", "refused", "failed"]
    status: int = Field(description="The HTTP status the request was answered with.")
    userId: str | None = Field(description="The person; with a key, the key's maker is keyMaker.")
    apiKeyId: str | None
    keyMaker: str | None
    libraryId: str | None = Field(
        description="The library acted on; for a refused entry, the library asked for."
    )
    objectKind: str | None
    objectId: str | None
    client: str | None = Field(description="The caller's address as the server saw it.")
    door: str = Field(description="rest or mcp.")

    @classmethod
    def of(cls, event: AuditEvent) -> AuditEntry:
        return cls(
            id=event.id,
            at=event.at,
            action=event.action,
            outcome=event.outcome,
            status=event.status,
            userId=event.user_id,
            apiKeyId=event.api_key_id,
            keyMaker=event.key_maker,
            libraryId=event.library_id,
            objectKind=event.object_kind,
            objectId=event.object_id,
            client=event.client,
            door=event.door,
        )
