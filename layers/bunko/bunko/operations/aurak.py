"""aurak's dialect (camelCase): the one definition of each shape aurak's API speaks, shared
by the REST routers that answer in it. MCP speaks TelosDB's dialect (operations/telosdb.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from bunko.domain import Document
from bunko.domain.accounts import User
from bunko.domain.ingest_options import StatusName
from bunko.domain.metadata import shown

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
            createdAt=doc.created_at,
            updatedAt=doc.updated_at,
        )
