"""KnowledgeBaseService: aurak's /upload and /knowledge-bases over the ingest service.

An upload is checked (type, size, chunking, embedding model) before anything is stored,
then handed to IngestService, which keeps the original and queues indexing; the record
comes back `pending` and moves through `indexing` to `completed` or `failed`. The
upload's own options (mode, embeddingModelId) are kept beside the document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from bunko.domain import Document
from bunko.domain.ingest_options import MODES
from bunko.errors import (
    NotFoundError,
    PayloadTooLargeError,
    UnsupportedMediaError,
    ValidationError,
)
from bunko.parsing import SUPPORTED_MIME_TYPES, is_supported, resolve_mime
from bunko.ports import ModelConfigStore, SettingsStore
from bunko.services.ingest import IngestService

OPTIONS_SCOPE = "upload"
MAX_NAME_LENGTH = 255


@dataclass(frozen=True)
class UploadOptions:
    chunk_size: int | None = None
    chunk_overlap: int | None = None
    embedding_model_id: str | None = None
    mode: str = "fast"


class KnowledgeBaseService:
    def __init__(
        self,
        *,
        ingest: IngestService,
        model_configs: ModelConfigStore,
        options: SettingsStore,
        max_file_bytes: int,
    ) -> None:
        self.ingest = ingest
        self.metadata = ingest.metadata
        self.model_configs = model_configs
        self.options = options
        self.max_file_bytes = max_file_bytes

    def upload(
        self,
        workspace_id: str,
        *,
        filename: str,
        data: bytes,
        content_type: str | None,
        options: UploadOptions,
    ) -> Document:
        name = PurePosixPath((filename or "").replace("\\", "/")).name.strip()
        if not name or len(name) > MAX_NAME_LENGTH:
            raise ValidationError(f"file: needs a file name of 1 to {MAX_NAME_LENGTH} characters")
        if not is_supported(name, content_type):
            kinds = ", ".join(sorted(SUPPORTED_MIME_TYPES))
            raise UnsupportedMediaError(f"unsupported file type for {name}: send one of {kinds}")
        if not data:
            raise ValidationError("file: empty")
        if len(data) > self.max_file_bytes:
            raise PayloadTooLargeError(
                f"file is {len(data)} bytes; the limit is {self.max_file_bytes} bytes"
            )
        if options.mode not in MODES:
            raise ValidationError("mode: fast or precise")
        if options.embedding_model_id is not None:
            config = self.model_configs.get_model_config(workspace_id, options.embedding_model_id)
            if config is None or config.type != "embedding":
                raise ValidationError(
                    f"embeddingModelId: no embedding model config {options.embedding_model_id!r}"
                )
        doc = self.ingest.submit_file(
            workspace_id,
            path=name,
            data=data,
            mime=resolve_mime(name, data, content_type),
            chunk_size=options.chunk_size,
            chunk_overlap=options.chunk_overlap,
            source="upload",
        )
        self.options.put_settings(
            OPTIONS_SCOPE,
            doc.id,
            {"mode": options.mode, "embeddingModelId": options.embedding_model_id},
        )
        return doc

    def upload_options(self, document_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Each file's upload options (mode, embeddingModelId), read in one batch."""
        saved = self.options.get_many_settings(OPTIONS_SCOPE, document_ids)
        default = {"mode": "fast", "embeddingModelId": None}
        return {doc_id: saved.get(doc_id, default) for doc_id in document_ids}

    def list(self, workspace_id: str, *, limit: int, offset: int = 0) -> list[Document]:
        return self.metadata.list_documents(workspace_id, limit=limit, offset=offset)

    def get(self, workspace_id: str, document_id: str) -> Document:
        doc = self.metadata.get_document(workspace_id, document_id)
        if doc is None:
            raise NotFoundError(f"knowledge base file {document_id} not found")
        return doc

    def delete(self, workspace_id: str, document_id: str) -> Document:
        """The document, its chunks, index entries and blobs; NotFoundError when the id is
        not in this workspace (another user's id looks exactly like a missing one)."""
        doc = self.get(workspace_id, document_id)
        self.ingest.delete_document(workspace_id, doc.id)
        self.options.delete_settings(OPTIONS_SCOPE, doc.id)
        return doc

    def clear(self, workspace_id: str) -> int:
        docs = list(self.metadata.iter_documents(workspace_id))
        for doc in docs:
            self.ingest.delete_document(workspace_id, doc.id)
            self.options.delete_settings(OPTIONS_SCOPE, doc.id)
        return len(docs)
