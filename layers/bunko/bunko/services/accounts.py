"""The account side's services, built together from their ports (bootstrap supplies the
adapters): auth, users, model configs, settings, uploads, vision advice, conversion."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from bunko.config import Settings
from bunko.ports import BlobStore, MetadataStore
from bunko.ports_accounts import (
    DocumentConverter,
    LoginAttemptStore,
    ModelConfigStore,
    SecretCipher,
    SettingsStore,
    UserStore,
)
from bunko.services.auth import AuthService
from bunko.services.ingest import IngestService
from bunko.services.knowledge_base import KnowledgeBaseService
from bunko.services.libreoffice import ConversionService
from bunko.services.model_configs import ModelConfigService
from bunko.services.passwords import PasswordHasher
from bunko.services.throttle import LoginThrottle
from bunko.services.tokens import JwtVerifier, TokenService
from bunko.services.user_settings import UserSettingsService, default_settings
from bunko.services.users import UserAdminService
from bunko.services.vision import VisionAdvisor
from bunko.services.workspace_settings import FolderCheck, WorkspaceSettingsService


@dataclass
class AccountStores:
    users: UserStore
    login_attempts: LoginAttemptStore
    model_configs: ModelConfigStore
    settings: SettingsStore


@dataclass
class AccountServices:
    auth: AuthService
    users: UserAdminService
    tokens: TokenService
    jwt_verifier: JwtVerifier
    model_configs: ModelConfigService
    user_settings: UserSettingsService
    workspace_settings: WorkspaceSettingsService
    knowledge_base: KnowledgeBaseService
    vision: VisionAdvisor
    conversions: ConversionService


def build_auth(
    settings: Settings, *, stores: AccountStores, metadata: MetadataStore, jwt_secret: str
) -> AuthService:
    return AuthService(
        users=stores.users,
        metadata=metadata,
        hasher=PasswordHasher(),
        tokens=TokenService(
            secret=jwt_secret,
            issuer=settings.jwt_issuer,
            lifetime=timedelta(minutes=settings.access_token_minutes),
        ),
        throttle=LoginThrottle(
            stores.login_attempts,
            max_failures=settings.login_max_failures,
            lockout=timedelta(seconds=settings.login_lockout_seconds),
        ),
    )


def build_account_services(
    settings: Settings,
    *,
    stores: AccountStores,
    metadata: MetadataStore,
    blobs: BlobStore,
    ingest: IngestService,
    cipher: SecretCipher,
    converter: DocumentConverter,
    jwt_secret: str,
    folder_check: FolderCheck | None = None,
) -> AccountServices:
    auth = build_auth(settings, stores=stores, metadata=metadata, jwt_secret=jwt_secret)
    tokens = auth.tokens
    knowledge_base = KnowledgeBaseService(
        ingest=ingest,
        model_configs=stores.model_configs,
        options=stores.settings,
        max_file_bytes=settings.max_file_bytes,
    )
    workspace_settings = WorkspaceSettingsService(
        stores.settings, min_score=settings.min_score, limit=settings.search_limit
    )
    if folder_check is not None:
        workspace_settings.folder_check = folder_check
    return AccountServices(
        auth=auth,
        users=UserAdminService(
            users=stores.users,
            auth=auth,
            knowledge_base=knowledge_base,
            model_configs=stores.model_configs,
            settings=stores.settings,
        ),
        tokens=tokens,
        jwt_verifier=JwtVerifier(tokens, stores.users),
        model_configs=ModelConfigService(stores.model_configs, cipher),
        user_settings=UserSettingsService(
            stores.settings,
            stores.model_configs,
            defaults=default_settings(
                top_k=settings.search_limit, similarity_threshold=settings.min_score
            ),
        ),
        workspace_settings=workspace_settings,
        knowledge_base=knowledge_base,
        vision=VisionAdvisor(
            metadata=metadata,
            blobs=blobs,
            model_configs=stores.model_configs,
            max_file_bytes=settings.max_file_bytes,
        ),
        conversions=ConversionService(converter, blobs, max_file_bytes=settings.max_file_bytes),
    )
