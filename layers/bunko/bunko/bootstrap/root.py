"""The composition root: builds the whole graph from settings (BUNKO_BACKEND=local|aws).

Each shape's module builds its adapters; this module wires the same services over either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

from bunko.bootstrap.accounts import AccountServices, build_accounts, build_bills
from bunko.bootstrap.adapters import Adapters
from bunko.bootstrap.chat import build_chat
from bunko.bootstrap.embedding import build_embedding, workspace_generations
from bunko.bootstrap.ingest import build_ingest, build_work
from bunko.bootstrap.library import build_library
from bunko.bootstrap.moving import build_moves
from bunko.bootstrap.research import build_research
from bunko.bootstrap.search import build_search
from bunko.bootstrap.settings import build_preferences
from bunko.bootstrap.sources import build_sources
from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID, Workspace
from bunko.ports import BlobStore, Embedder, IngestQueue, MetadataStore, SearchIndex
from bunko.ports.uploads import UploadSigner
from bunko.services.accounts import ApiKeyService, AuditTrail, Identity
from bunko.services.chat import (
    AnswerBook,
    ChatService,
    ChatSlots,
    ConversationService,
    MissingList,
)
from bunko.services.conversion import ConversionService, VisionAdvisor
from bunko.services.embedding import ModelSwitch, Refiner
from bunko.services.ingest import (
    ChunkItemsService,
    IndexingPipeline,
    IngestService,
    KnowledgeBaseService,
    StatusService,
    UploadPolicy,
)
from bunko.services.library import Library, OriginalFiles
from bunko.services.moving import LibraryMoves
from bunko.services.research import ResearchService
from bunko.services.search import SearchService
from bunko.services.sources import Sources


@dataclass
class Services:
    """Every wing's services, for the doors. No field has a default: each wing's bundle
    (`bootstrap/<wing>.py`) sets its own, so one a builder forgets fails at construction."""

    # the adapters the doors read directly
    settings: Settings
    metadata: MetadataStore
    blobs: BlobStore
    index: SearchIndex
    embedder: Embedder | None
    # ingest (`IngestWing`)
    queue: IngestQueue
    pipeline: IndexingPipeline
    ingest: IngestService
    uploads: UploadPolicy  # what a file must be, for every door (ingest checks it too)
    status: StatusService
    items: ChunkItemsService  # chunk-level edits (TelosDB's "items")
    # library (`LibraryWing`)
    library: Library  # what a library holds, read one way by every door
    originals: OriginalFiles | None  # a file's original, by a short-lived link
    upload_signer: UploadSigner | None  # direct uploads (S3 presigned PUT)
    # sources (`SourcesWing`): connectors; None where the shape keeps none
    sources: Sources | None
    # embedding (`EmbeddingWing`): None without model configs / BUNKO_REFINE_EMBEDDER
    refiner: Refiner | None
    model_switch: ModelSwitch | None
    search: SearchService
    research: ResearchService | None  # research projects and sealed corpora
    # chat (`ChatWing`)
    chat: ChatService  # answers with sources (models chosen per user, per call)
    conversations: ConversationService | None  # chat conversations kept per owner
    chat_slots: ChatSlots  # chats in progress per user, shared by every chat door
    answers: AnswerBook | None  # answers people mark (docs/answers.md)
    missing: MissingList | None  # what a library could not answer
    # accounts (`AccountWing`): all but `identity` None where no accounts are configured
    identity: Identity
    accounts: AccountServices | None
    apikeys: ApiKeyService | None
    knowledge_base: KnowledgeBaseService | None
    vision: VisionAdvisor | None
    conversions: ConversionService | None
    audit: AuditTrail | None  # who did what (docs/audit.md)
    moves: LibraryMoves | None  # exports and imports started at the REST and MCP doors
    closers: list[Callable[[], None]]

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
    """The services over a shape's adapters (also used by `bunko eval`'s throw-away graph), in
    one pass: each wing's builder takes the ports and the wings below it and returns its bundle.
    `queue` overrides the shape's; `storage_quota`: see `build_ingest`."""
    closers = list(adapters.closers)
    generations = workspace_generations(settings, adapters, closers)
    work = build_work(settings, adapters, generations, closers, queue=queue)
    embedding = build_embedding(settings, adapters, generations, work.busy, closers)
    switch, bills = embedding.model_switch, build_bills(adapters)
    ingest = build_ingest(settings, adapters, generations, work, bills, storage_quota=storage_quota)
    library = build_library(adapters, work.depth)
    sources = build_sources(settings, adapters, ingest.ingest, library.library, closers)
    adapters.metadata.ensure_workspace(Workspace(id=DEFAULT_WORKSPACE_ID, name="default"))
    preferences = build_preferences(settings, adapters, switch)
    search = build_search(settings, adapters, generations, preferences)
    chat = build_chat(settings, adapters, search, switch, preferences, bills)
    research = build_research(settings, adapters, search)
    accounts = build_accounts(
        settings, adapters, ingest, library, embedding, preferences, research, chat, sources
    )
    services = Services(
        settings=settings,
        metadata=adapters.metadata,
        blobs=adapters.blobs,
        index=adapters.index,
        embedder=adapters.embedder,
        search=search,
        research=research,
        closers=closers,
        moves=None,
        **fields_of(ingest, library, sources, embedding, chat, accounts),
    )
    services.moves = build_moves(services, adapters.moves)
    return services


def fields_of(*wings: object) -> dict[str, object]:
    """The wings' bundles, spread into the container: their field names are its fields."""
    return {f.name: getattr(wing, f.name) for wing in wings for f in fields(wing)}
