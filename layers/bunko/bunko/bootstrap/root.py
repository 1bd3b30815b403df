"""The composition root: builds the whole graph from settings (BUNKO_BACKEND=local|aws).

Each shape's module builds its adapters; this module wires the same services over either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bunko.bootstrap.accounts import AccountServices, build_account_services
from bunko.bootstrap.adapters import Adapters
from bunko.bootstrap.conversations import build_conversations
from bunko.bootstrap.models import ConfiguredModels
from bunko.bootstrap.workspace_embedders import NO_ROUTES
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID, Workspace
from bunko.domain.ingest_options import IngestDefaults
from bunko.errors import ValidationError
from bunko.ports import (
    DEFAULT_MODEL,
    BlobStore,
    Embedder,
    EmbeddingRoute,
    IngestQueue,
    MetadataStore,
    SearchIndex,
)
from bunko.ports.uploads import UploadSigner
from bunko.services.accounts import ApiKeyService, ApiKeyVerifier, Identity
from bunko.services.bounds import TokenBucket
from bunko.services.chat import ChatService, ChatSlots, ConversationService
from bunko.services.embedding import (
    BuildSteps,
    FixedRoutes,
    ModelConfigService,
    ModelSwitch,
    Refiner,
    RefiningRoutes,
    WorkspaceRoutes,
)
from bunko.services.ingest import (
    ChunkItemsService,
    IndexingPipeline,
    IngestService,
    OriginalFiles,
    StatusService,
    UploadPolicy,
    UploadQuota,
)
from bunko.services.research import ResearchService
from bunko.services.search import SearchService


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
    uploads: UploadPolicy  # what a file must be, for every door (ingest checks it too)
    search: SearchService
    status: StatusService
    items: ChunkItemsService  # chunk-level reads and edits (TelosDB's "items")
    identity: Identity
    chat: ChatService  # answers with sources (models chosen per user, per call)
    # Users, model configs, settings and API keys: None only on an AWS deployment that
    # configures no accounts (no JWT secret / KMS key).
    accounts: AccountServices | None = None
    apikeys: ApiKeyService | None = None
    upload_signer: UploadSigner | None = None  # direct uploads (S3 presigned PUT)
    originals: OriginalFiles | None = None  # a file's original, by a short-lived link
    research: ResearchService | None = None  # research projects and sealed corpora
    conversations: ConversationService | None = None  # chat conversations kept per owner
    refiner: Refiner | None = None  # progressive quality (BUNKO_REFINE_EMBEDDER), not started
    # Each workspace's embedding model: None without model configs (no account stores).
    model_switch: ModelSwitch | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)
    # chats in progress per user, shared by every chat door (docs/security.md)
    chat_slots: ChatSlots = field(default_factory=lambda: ChatSlots(0))

    def close(self) -> None:
        for close in self.closers:
            close()


def _unopened(workspace_id: str, config_id: str) -> EmbeddingRoute:
    raise ValidationError("model configs are not available on this deployment")


def _model_switch(
    settings: Settings,
    adapters: Adapters,
    configs: ModelConfigService,
    routes: FixedRoutes,
    closers: list[Callable[[], None]],
) -> ModelSwitch:
    """The workspace's embedding model: chosen through /user-settings (selectedEmbeddingId),
    honoured by uploads (embeddingModelId), built by the ingest function's steps on AWS."""
    own = routes if isinstance(routes, WorkspaceRoutes) else None
    if own is not None and adapters.route_opener is not None:
        opened: list[Callable[[], None]] = []
        own.opener = adapters.route_opener(configs, opened)
        closers.append(lambda: [close() for close in opened])
    switch = ModelSwitch(
        metadata=adapters.metadata,
        configs=configs,
        routes=own,
        refusal=NO_ROUTES,
        default_name=adapters.embedder.name if adapters.embedder else None,
        batch_size=settings.embed_batch_size,
    )
    if own is not None:
        configs.in_use = lambda ws, config_id: config_id in switch.models(ws)
        configs.changed = own.refresh
        if adapters.send_build_step is not None:
            switch.steps = BuildSteps(switch, own.store, adapters.send_build_step)
    return switch


def build_adapters(settings: Settings) -> Adapters:
    if settings.backend == "aws":
        from bunko.bootstrap.aws import build_aws_adapters

        return build_aws_adapters(settings)
    from bunko.bootstrap.local import build_local_adapters

    return build_local_adapters(settings)


def build_services(
    settings: Settings | None = None, *, queue: IngestQueue | None = None
) -> Services:
    """Build the whole graph from settings. `queue` overrides the shape's ingest queue."""
    settings = settings or Settings()
    adapters = build_adapters(settings)
    return wire_services(settings, adapters, queue=queue)


def wire_services(
    settings: Settings, adapters: Adapters, *, queue: IngestQueue | None = None
) -> Services:
    """The services over a shape's adapters (also used by `bunko eval`'s throw-away graph)."""
    metadata, blobs, index, embedder = (
        adapters.metadata,
        adapters.blobs,
        adapters.index,
        adapters.embedder,
    )
    closers = list(adapters.closers)
    default = EmbeddingRoute(DEFAULT_MODEL, embedder, index)
    # Each workspace's model and index generation: its own model config's where the shape
    # can hold one (the opener is set once the model configs exist), else the default.
    routes: FixedRoutes = FixedRoutes(default)
    if adapters.route_opener is not None and adapters.accounts is not None:
        store = adapters.accounts.stores.settings
        routes = (
            RefiningRoutes(default, store, _unopened, adapters.refined)
            if adapters.refined
            else WorkspaceRoutes(default, store, _unopened)
        )
    pipeline = IndexingPipeline(
        metadata=metadata,
        blobs=blobs,
        index=index,
        embedder=embedder,
        batch_size=settings.embed_batch_size,
        routes=routes,
    )
    queue = queue or adapters.queue
    queue_depth = lambda: 0  # noqa: E731 (SQS: the queue's depth is CloudWatch's to report)
    if queue is None:
        from bunko.adapters.local.worker import ThreadIngestQueue

        worker = ThreadIngestQueue(pipeline.process)
        closers.insert(0, worker.stop)  # stop the worker before its stores close
        queue, queue_depth = worker, lambda: worker.pending
    refiner = None
    if isinstance(routes, RefiningRoutes):
        refiner = Refiner(
            metadata=metadata, routes=routes, busy=lambda: queue_depth() > 0,
            quiet_seconds=settings.refine_quiet_seconds,
        )  # fmt: skip
        closers.insert(0, refiner.stop)  # before the worker and the stores
    uploads = UploadPolicy(max_file_bytes=settings.max_file_bytes)
    ingest = IngestService(
        metadata=metadata,
        blobs=blobs,
        index=index,
        queue=queue,
        defaults=IngestDefaults(
            chunk_size=settings.chunk_size,
            chunk_overlap=settings.chunk_overlap,
        ),
        policy=uploads,
        routes=routes,
    )
    metadata.ensure_workspace(Workspace(id=DEFAULT_WORKSPACE_ID, name="default"))
    accounts = apikeys = switch = None
    verifiers = []
    if adapters.accounts is not None:
        configs = ModelConfigService(
            adapters.accounts.stores.model_configs,
            adapters.accounts.cipher,
            allow_private_endpoints=settings.private_model_endpoints,
        )
        switch = _model_switch(settings, adapters, configs, routes, closers)
        switch.refiner = refiner
    if adapters.accounts is not None and adapters.accounts.jwt_secret is not None:
        assert switch is not None
        accounts = build_account_services(
            settings, adapters, adapters.accounts, ingest=ingest, model_configs=switch.configs
        )
        accounts.model_switch = switch
        accounts.user_settings.embedding = switch
        accounts.knowledge_base.embedding = switch
        apikeys = ApiKeyService(store=adapters.accounts.api_keys, metadata=metadata)
        verifiers = [accounts.jwt_verifier, ApiKeyVerifier(apikeys)]
        ingest.quota = UploadQuota(
            metadata=metadata,
            counters=adapters.accounts.stores.login_attempts,
            max_bytes=settings.upload_quota_bytes,
            per_minute=settings.upload_rate_per_minute,
            burst=settings.upload_burst,
        )
    search = SearchService(
        metadata=metadata,
        index=index,
        embedder=embedder,
        method=settings.fusion,
        vector_weight=settings.vector_weight,
        candidates=settings.candidates,
        limit=settings.search_limit,
        min_score=settings.min_score,
        saved_defaults=accounts.workspace_settings if accounts else None,
        routes=routes,
    )
    chat = ChatService(
        search=search,
        models=ConfiguredModels(
            accounts.model_configs if accounts else None,
            embedder_for=lambda workspace_id: search.route(workspace_id).embedder,
        ),
        settings=accounts.user_settings if accounts else None,
    )
    research = None
    if adapters.research is not None and adapters.passage_scorer is not None:
        research = ResearchService(
            store=adapters.research, metadata=metadata, search=search,
            scorer=adapters.passage_scorer,
        )  # fmt: skip
        if adapters.accounts is not None:
            research.seal_rate = TokenBucket(
                adapters.accounts.stores.login_attempts, burst=settings.research_seal_burst,
                per_minute=settings.research_seals_per_minute, what="research seal",
            )  # fmt: skip
    conversations = build_conversations(settings, adapters.conversations)
    if accounts is not None:
        # Search needs the accounts' saved settings and research needs search, so the user
        # admin learns about research last: deleting a user deletes their research (and
        # their conversations) too.
        accounts.users.research = research
        accounts.users.conversations = conversations
    return Services(
        settings=settings,
        metadata=metadata,
        blobs=blobs,
        index=index,
        embedder=embedder,
        queue=queue,
        pipeline=pipeline,
        ingest=ingest,
        uploads=uploads,
        search=search,
        status=StatusService(documents=metadata, embedder=embedder, queue_depth=queue_depth),
        items=ChunkItemsService(
            metadata=metadata, blobs=blobs, index=index, embedder=embedder, routes=routes
        ),
        identity=Identity(verifiers, auth_enabled=settings.auth == "on"),
        chat=chat,
        accounts=accounts,
        apikeys=apikeys,
        upload_signer=adapters.upload_signer,
        originals=(
            OriginalFiles(metadata=metadata, blobs=blobs, links=adapters.original_links)
            if adapters.original_links
            else None
        ),
        research=research,
        conversations=conversations,
        refiner=refiner,
        model_switch=switch,
        closers=closers,
        chat_slots=ChatSlots(settings.chat_streams_per_user),
    )
