"""The composition root: the only place adapters are built (BUNKO_BACKEND=local|aws)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bunko.bootstrap_accounts import aws_account_parts, build_accounts
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID, DocumentStatus, Workspace
from bunko.ports import BlobStore, Embedder, IngestJob, IngestQueue, MetadataStore, SearchIndex
from bunko.services.accounts import AccountServices
from bunko.services.apikeys import ApiKeyService, ApiKeyVerifier
from bunko.services.identity import Identity
from bunko.services.ingest import IngestDefaults, IngestService
from bunko.services.items import ItemsService
from bunko.services.pipeline import IndexingPipeline
from bunko.services.search import SearchService

if TYPE_CHECKING:
    from bunko.adapters.aws import AwsAccountParts

log = logging.getLogger(__name__)


@dataclass
class Services:
    settings: Settings
    metadata: MetadataStore
    blobs: BlobStore
    index: SearchIndex
    embedder: Embedder | None
    queue: IngestQueue
    pipeline: IndexingPipeline
    ingest: IngestService
    search: SearchService
    identity: Identity
    accounts: AccountServices | None = None  # users, model configs, settings (REST)
    items: ItemsService | None = None  # chunk-level reads and edits (MCP); always built
    apikeys: ApiKeyService | None = None  # agents' API keys (local backend)

    def close(self) -> None:
        stop = getattr(self.queue, "stop", None)
        if stop:
            stop()
        for part in (self.index, self.metadata):
            close = getattr(part, "close", None)
            if close:
                close()


def index_generation(embedder: Embedder | None) -> str:
    """Each embedding model gets its own index generation, so switching models never mixes
    vectors of two models; the new generation is filled by a reindex."""
    name = embedder.name if embedder else "keyword-only"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def _build_local(settings: Settings):
    from bunko.adapters.local.embedders import build_embedder
    from bunko.adapters.local.files import FileBlobStore
    from bunko.adapters.local.search_index import LocalSearchIndex
    from bunko.adapters.local.sqlite_db import SqliteDatabase
    from bunko.adapters.local.sqlite_store import SqliteMetadataStore

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    metadata = SqliteMetadataStore(SqliteDatabase(settings.metadata_path))
    blobs = FileBlobStore(settings.blob_dir)
    embedder = build_embedder(
        settings.embedder,
        state_dir=settings.index_dir / "lsa",
        batch_size=settings.embed_batch_size,
        lsa_dimension=settings.lsa_dimension,
        threads=settings.embed_threads,
    )
    index = LocalSearchIndex(
        settings.index_dir / index_generation(embedder),
        dimension=embedder.dimension if embedder else None,
    )
    return metadata, blobs, index, embedder


def build_services(
    settings: Settings | None = None, *, queue: IngestQueue | None = None
) -> Services:
    """Build the whole graph from settings. `queue` overrides the default ingest queue."""
    settings = settings or Settings()
    if settings.backend == "aws":
        from bunko.adapters.aws import build_aws_adapters

        metadata, blobs, index, embedder, aws_queue = build_aws_adapters(settings)
        queue = queue or aws_queue
    else:
        metadata, blobs, index, embedder = _build_local(settings)
    pipeline = IndexingPipeline(
        metadata=metadata,
        blobs=blobs,
        index=index,
        embedder=embedder,
        batch_size=settings.embed_batch_size,
    )
    if queue is None:
        from bunko.adapters.local.worker import ThreadIngestQueue

        queue = ThreadIngestQueue(pipeline.process)
    ingest = IngestService(
        metadata=metadata,
        blobs=blobs,
        index=index,
        queue=queue,
        defaults=IngestDefaults(
            chunk_size=settings.chunk_size,
            chunk_overlap=settings.chunk_overlap,
            max_file_bytes=settings.max_file_bytes,
        ),
    )
    search = SearchService(
        metadata=metadata,
        index=index,
        embedder=embedder,
        method=settings.fusion,
        vector_weight=settings.vector_weight,
        candidates=settings.candidates,
    )
    metadata.ensure_workspace(Workspace(id=DEFAULT_WORKSPACE_ID, name="default"))
    aws_parts = aws_account_parts(settings)
    accounts = build_accounts(
        settings, metadata=metadata, blobs=blobs, ingest=ingest, aws_parts=aws_parts
    )
    apikeys = _build_apikeys(settings, metadata, aws_parts)
    key_verifiers = [ApiKeyVerifier(apikeys)] if apikeys else []
    return Services(
        settings=settings,
        metadata=metadata,
        blobs=blobs,
        index=index,
        embedder=embedder,
        queue=queue,
        pipeline=pipeline,
        ingest=ingest,
        search=search,
        identity=Identity(
            ([accounts.jwt_verifier] if accounts else []) + key_verifiers,
            auth_enabled=settings.auth == "on",
        ),
        accounts=accounts,
        items=ItemsService(metadata=metadata, blobs=blobs, index=index, embedder=embedder),
        apikeys=apikeys,
    )


def _build_apikeys(
    settings: Settings, metadata: MetadataStore, aws_parts: AwsAccountParts | None
) -> ApiKeyService | None:
    if settings.backend != "local":
        return ApiKeyService(store=aws_parts.api_keys, metadata=metadata) if aws_parts else None
    from bunko.adapters.local.sqlite_apikeys import SqliteApiKeyStore

    return ApiKeyService(store=SqliteApiKeyStore(metadata.db), metadata=metadata)  # type: ignore[attr-defined]


def requeue_unfinished(services: Services) -> int:
    """Queue documents a previous run left pending or indexing (the local queue is in memory)."""
    count = 0
    for doc in services.metadata.iter_documents():
        if doc.status in (DocumentStatus.PENDING, DocumentStatus.INDEXING):
            services.queue.enqueue(IngestJob(doc.workspace_id, doc.id, doc.revision))
            count += 1
    return count


def index_needs_rebuild(services: Services) -> bool:
    """True when metadata has chunks but this index generation has none (a new model)."""
    return services.index.count() == 0 and services.metadata.count_chunks() > 0
