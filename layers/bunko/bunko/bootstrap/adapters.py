"""What each shape's builder hands the composition root: one adapter for every port."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bunko.ports import (
    ApiKeyStore,
    BlobStore,
    DocumentConverter,
    Embedder,
    EmbeddingGeneration,
    GenerationOpener,
    IngestQueue,
    LoginAttemptStore,
    MetadataStore,
    ModelConfigStore,
    PassageScorer,
    ResearchStore,
    SearchIndex,
    SecretCipher,
    SettingsStore,
    UserStore,
)
from bunko.ports.answers import AnswerStore
from bunko.ports.audit import AuditStore
from bunko.ports.conversations import ConversationStore
from bunko.ports.downloads import OriginalLinks
from bunko.ports.libraries import LibraryStore
from bunko.ports.moves import MovePorts
from bunko.ports.sign_in import IdentityLinkStore
from bunko.ports.uploads import UploadSigner
from bunko.services.embedding import ModelConfigService
from bunko.services.settings import FolderCheck

# (model configs, closers to add the opened indexes' close to) -> the opener
OpenerFactory = Callable[[ModelConfigService, list[Callable[[], None]]], GenerationOpener]


@dataclass
class AccountStores:
    users: UserStore
    login_attempts: LoginAttemptStore
    model_configs: ModelConfigStore
    settings: SettingsStore
    libraries: LibraryStore
    links: IdentityLinkStore  # people of the identity provider, linked to users


@dataclass
class AccountAdapters:
    """The account side of a shape: stores, the API key store, secrets and their cipher."""

    stores: AccountStores
    api_keys: ApiKeyStore
    cipher: SecretCipher
    jwt_secret: str | None  # None: this process signs nobody in (the AWS ingest function)
    # The web app's client secret at the identity provider when it is kept in a secret store
    # (AWS: Secrets Manager) rather than in BUNKO_OIDC_CLIENT_SECRET
    oidc_client_secret: str | None = None
    audit: AuditStore | None = None  # the audit trail (None: nothing is recorded)
    answers: AnswerStore | None = None  # answers people mark (None: none kept)


@dataclass
class Adapters:
    metadata: MetadataStore
    blobs: BlobStore
    index: SearchIndex
    embedder: Embedder | None
    converter: DocumentConverter
    accounts: AccountAdapters | None  # None on AWS when the deployment configures no accounts
    queue: IngestQueue | None = None  # None: the root builds the in-process queue
    upload_signer: UploadSigner | None = None
    original_links: OriginalLinks | None = None  # links a browser tab opens originals by
    folder_check: FolderCheck | None = None
    research: ResearchStore | None = None  # research projects and sealed corpora
    conversations: ConversationStore | None = None  # chat conversations kept per owner
    passage_scorer: PassageScorer | None = None  # BM25 inside one sealed corpus
    # Opens a model config's generation (its embedder and index generation) for a workspace of
    # its own model; None: this shape serves every workspace with the default generation.
    generation_opener: OpenerFactory | None = None
    # Where no process outlives a request (AWS): queues a step of a workspace's change of
    # embedding model (workspace, model config, last document done); None: a thread builds it
    send_build_step: Callable[[str, str, str | None], None] | None = None
    # A stronger model's generation refined in the background (BUNKO_REFINE_EMBEDDER)
    refined: EmbeddingGeneration | None = None
    # where a library's move started at a door lives (None: nowhere; no door moves one)
    moves: MovePorts | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)
