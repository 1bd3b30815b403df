"""KnowledgeBaseService: aurak's /upload and /knowledge-bases over the ingest service.

An upload is checked (the upload policy's name, type and size; chunking; embedding model)
before anything is stored, then handed to IngestService. Every upload is a new file unless
it names the file it replaces (`replace_id`): two different files called `report.pdf` are
two documents (`report.pdf`, `report (2).pdf`), never one overwriting the other.
IngestService keeps the original and queues indexing; the record comes back `pending` and
moves through `indexing` to `completed` or `failed`. The upload's own options (mode,
embeddingModelId) are kept on the document record, so a listing reads them with it.
"""

from __future__ import annotations

from dataclasses import replace

from bunko.domain import Document
from bunko.domain.document_query import DocumentPage, DocumentQuery
from bunko.domain.ingest_options import MODES
from bunko.domain.metadata import check_metadata
from bunko.errors import ValidationError
from bunko.parsing import resolve_mime
from bunko.ports import DEFAULT_MODEL, ModelConfigStore
from bunko.services.embedding import ModelSwitch
from bunko.services.ingest.ingest import IngestService
from bunko.services.ingest.upload import Upload
from bunko.services.library import Library


class KnowledgeBaseService:
    def __init__(
        self,
        *,
        ingest: IngestService,
        library: Library,
        model_configs: ModelConfigStore,
        embedding_models: frozenset[str] = frozenset(),
        embedding: ModelSwitch | None = None,
    ) -> None:
        """`embedding_models`: the names of the model this deployment embeds with (its
        BUNKO_EMBEDDER kind, the embedder's name and model id); empty when keyword-only.
        `embedding`: each workspace's model; None where workspaces cannot choose one."""
        self.ingest = ingest
        self.library = library
        self.policy = ingest.policy
        self.metadata = ingest.metadata
        self.model_configs = model_configs
        self.embedding_models = embedding_models
        self.embedding = embedding

    def _check_model(self, workspace_id: str, config_id: str) -> None:
        """An upload's embeddingModelId must name the model its workspace embeds with (or the
        one being built), since the workspace's index holds one model's vectors (a query is
        embedded once): a document embedded by another could never be found by its vectors,
        so it is refused rather than silently embedded with the model in use."""
        config = self.model_configs.get_model_config(workspace_id, config_id)
        if config is None or config.type != "embedding":
            raise ValidationError(f"embeddingModelId: no embedding model config {config_id!r}")
        models = self.embedding.models(workspace_id) if self.embedding else {DEFAULT_MODEL}
        if config_id in models:
            return
        if DEFAULT_MODEL in models and config.model_id in self.embedding_models:
            return  # a config of the server's own model
        serving = self.embedding.status(workspace_id).serving if self.embedding else None
        if serving and serving.config_id:
            active = f"{serving.name!r} ({serving.model_id})"
        else:
            name = min(self.embedding_models, key=len) if self.embedding_models else None
            active = repr(name) if name else None
        raise ValidationError(
            f"embeddingModelId: {config.name!r} ({config.model_id}) cannot be honoured: "
            + (
                f"this knowledge base embeds every document with {active}"
                if active
                else "this knowledge base has no embedding model (keyword search only)"
            )
            + "; omit embeddingModelId, name a config of that model, or choose this one for "
            "the workspace (PUT /user-settings selectedEmbeddingId)"
        )

    def upload(self, upload: Upload) -> Document:
        """`upload` as the client sent it (`name`: its file name, `mime`: its declared type,
        `replaces`: the id of the file it replaces, if any): a new file (same-name files
        stay distinct files), or a new revision of the document it replaces; identical bytes
        again return the same document."""
        workspace_id = upload.workspace_id
        name = self.policy.file_name(upload.name)
        self.policy.file_type(name, upload.mime)
        self.policy.size(len(upload.data), what="file")
        if upload.mode not in MODES:
            raise ValidationError("mode: fast or precise")
        if upload.embedding_model_id is not None:
            self._check_model(workspace_id, upload.embedding_model_id)
        mime = resolve_mime(name, upload.data, upload.mime)
        upload = replace(upload, name=name, mime=mime, policy_checked=True)
        if upload.replaces is None:
            category = (upload.category or "").strip() or None
            return self.ingest.submit(replace(upload, category=category))
        # A new revision at the document's own path; it keeps its category and source.
        doc = self.get(workspace_id, upload.replaces)
        return self.ingest.submit(
            replace(upload, path=doc.path, category=doc.category, source=doc.source)
        )

    def list(
        self,
        workspace_id: str,
        query: DocumentQuery | None = None,
        *,
        limit: int,
        offset: int = 0,
    ) -> DocumentPage:
        """One page of the files (`query`: by name, in an order; None: newest first)."""
        return self.library.files(workspace_id, query, limit=limit, offset=offset)

    def get(self, workspace_id: str, document_id: str) -> Document:
        return self.library.document(workspace_id, document_id, what="knowledge base file")

    def set_metadata(self, workspace_id: str, document_id: str, raw: object) -> Document:
        """Replace a file's metadata with the client's object (checked: ValidationError
        naming the key); NotFoundError for an id outside this workspace."""
        return self.ingest.set_metadata(workspace_id, document_id, check_metadata(raw))

    def delete(self, workspace_id: str, document_id: str) -> Document:
        """The document, its chunks, index entries and blobs; NotFoundError when the id is
        not in this workspace (another user's id looks exactly like a missing one)."""
        doc = self.get(workspace_id, document_id)
        self.ingest.delete_document(workspace_id, doc.id)
        return doc

    def clear(self, workspace_id: str) -> int:
        docs = self.library.documents(workspace_id)
        for doc in docs:
            self.ingest.delete_document(workspace_id, doc.id)
        return len(docs)
