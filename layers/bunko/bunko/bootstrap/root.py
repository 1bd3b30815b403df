"""The composition root: builds the whole graph from settings (BUNKO_BACKEND=local|aws).

Each shape's module builds its adapters; this module wires the same services over either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bunko.bootstrap.accounts import AccountServices, build_account_services, build_preferences
from bunko.bootstrap.adapters import Adapters
from bunko.bootstrap.conversations import build_conversations
from bunko.bootstrap.embedding import embedding_model_names, model_switch, workspace_generations
from bunko.bootstrap.models import chat_models
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID, Workspace
from bunko.domain.ingest_options import IngestDefaults
from bunko.ports import (
    BlobStore,
    Embedder,
    IngestQueue,
    MetadataStore,
    SearchIndex,
)
from bunko.ports.uploads import UploadSigner
from bunko.services.accounts import ApiKeyService, ApiKeyVerifier, Bills, Identity
from bunko.services.bounds import TokenBucket
from bunko.services.chat import ChatService, ChatSlots, ConversationService
from bunko.services.conversion import ConversionService, VisionAdvisor
from bunko.services.embedding import (
    ModelSwitch,
    Refiner,
    RefiningGenerations,
)
from bunko.services.ingest import (
    ChunkItemsService,
    IndexingPipeline,
    IngestService,
    KnowledgeBaseService,
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
    # A library's files as the web app sees them (/upload, /knowledge-bases), the vision
    # advisor and LibreOffice conversions: they read model configs and need a caller, so
    # like `accounts` they are None where no accounts are configured.
    knowledge_base: KnowledgeBaseService | None = None
    vision: VisionAdvisor | None = None
    conversions: ConversionService | None = None
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
    settings: Settings,
    adapters: Adapters,
    *,
    queue: IngestQueue | None = None,
    storage_quota: bool = False,
) -> Services:
    """The services over a shape's adapters (also used by `bunko eval`'s throw-away graph),
    built in one pass: generations and the workspace models, then ingest, then settings, search,
    chat and research, then the knowledge base, vision and conversions (where accounts are
    configured), then the account services over them all. `storage_quota`: apply people's
    storage quota without accounts (the ingest function, for presigned uploads arriving)."""
    metadata, blobs, index, embedder = (
        adapters.metadata,
        adapters.blobs,
        adapters.index,
        adapters.embedder,
    )
    account = adapters.accounts
    closers = list(adapters.closers)
    generations = workspace_generations(settings, adapters, closers)
    pipeline = IndexingPipeline(
        metadata=metadata,
        blobs=blobs,
        generations=generations,
        batch_size=settings.embed_batch_size,
    )
    queue = queue or adapters.queue
    queue_depth = lambda: 0  # noqa: E731 (SQS: the queue's depth is CloudWatch's to report)
    if queue is None:
        from bunko.adapters.local.worker import ThreadIngestQueue

        worker = ThreadIngestQueue(pipeline.process)
        closers.insert(0, worker.stop)  # stop the worker before its stores close
        queue, queue_depth = worker, lambda: worker.pending
    refiner = None
    if isinstance(generations, RefiningGenerations):
        refiner = Refiner(
            metadata=metadata,
            generations=generations,
            busy=lambda: queue_depth() > 0,
            quiet_seconds=settings.refine_quiet_seconds,
        )
        closers.insert(0, refiner.stop)  # before the worker and the stores
    switch = model_switch(settings, adapters, generations, refiner)
    signs_in = account is not None and account.jwt_secret is not None

    uploads = UploadPolicy(max_file_bytes=settings.max_file_bytes)
    # One count per person across their libraries: bytes, upload pace, conversations.
    bills = (
        Bills(users=account.stores.users, libraries=account.stores.libraries)
        if account is not None
        else None
    )
    ingest = IngestService(
        metadata=metadata,
        blobs=blobs,
        queue=queue,
        defaults=IngestDefaults(
            chunk_size=settings.chunk_size,
            chunk_overlap=settings.chunk_overlap,
        ),
        policy=uploads,
        generations=generations,
        quota=(
            UploadQuota(
                metadata=metadata,
                # no pace without accounts: a presigned upload's was taken when signed
                counters=account.stores.login_attempts if account and signs_in else None,
                max_bytes=settings.upload_quota_bytes,
                per_minute=settings.upload_rate_per_minute,
                burst=settings.upload_burst,
                bill=bills,
            )
            if (account is not None and signs_in) or storage_quota
            else None
        ),
    )
    metadata.ensure_workspace(Workspace(id=DEFAULT_WORKSPACE_ID, name="default"))

    preferences = build_preferences(settings, adapters, switch) if signs_in else None
    search = SearchService(
        metadata=metadata,
        generations=generations,
        method=settings.fusion,
        vector_weight=settings.vector_weight,
        candidates=settings.candidates,
        limit=settings.search_limit,
        min_score=settings.min_score,
        saved_defaults=preferences.workspace if preferences else None,
    )
    chat = ChatService(
        search=search,
        models=chat_models(
            switch.configs if preferences and switch else None,
            embedder_for=lambda workspace_id: search.generation(workspace_id).embedder,
        ),
        settings=preferences.user if preferences else None,
    )
    research = None
    if adapters.research is not None and adapters.passage_scorer is not None:
        research = ResearchService(
            store=adapters.research,
            metadata=metadata,
            search=search,
            scorer=adapters.passage_scorer,
            seal_rate=TokenBucket(
                account.stores.login_attempts,
                burst=settings.research_seal_burst,
                per_minute=settings.research_seals_per_minute,
                what="research seal",
            )
            if account is not None
            else None,
            max_corpus_revisions=settings.research_max_corpus_revisions,
        )
    conversations = build_conversations(
        settings,
        adapters.conversations,
        workspaces_of=bills.conversation_workspaces if bills is not None else None,
    )

    accounts = apikeys = knowledge_base = vision = conversions = None
    verifiers = []
    if account is not None and preferences is not None:
        assert switch is not None
        knowledge_base = KnowledgeBaseService(
            ingest=ingest,
            model_configs=account.stores.model_configs,
            embedding_models=embedding_model_names(settings, adapters),
            embedding=switch,
        )
        vision = VisionAdvisor(
            metadata=metadata,
            blobs=blobs,
            model_configs=account.stores.model_configs,
            max_file_bytes=settings.max_file_bytes,
        )
        conversions = ConversionService(
            adapters.converter, blobs, max_file_bytes=settings.max_file_bytes
        )
        accounts = build_account_services(
            settings,
            adapters,
            account,
            knowledge_base=knowledge_base,
            switch=switch,
            preferences=preferences,
            research=research,
            conversations=conversations,
        )
        apikeys = ApiKeyService(
            store=account.api_keys,
            metadata=metadata,
            users=account.stores.users,
            role_of=accounts.libraries.current_role,
        )
        verifiers = [accounts.jwt_verifier, ApiKeyVerifier(apikeys)]
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
        items=ChunkItemsService(metadata=metadata, blobs=blobs, generations=generations),
        identity=Identity(verifiers, auth_enabled=settings.auth == "on"),
        chat=chat,
        accounts=accounts,
        apikeys=apikeys,
        knowledge_base=knowledge_base,
        vision=vision,
        conversions=conversions,
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
