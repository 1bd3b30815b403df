"""The account services (auth, users, model configs, settings, libraries), wired from a
shape's account adapters over the wings below them; and the bills that count a person's
libraries (upload quota, conversations)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from bunko.bootstrap.adapters import AccountAdapters, AccountStores, Adapters
from bunko.bootstrap.chat import ChatWing
from bunko.bootstrap.embedding import EmbeddingWing, embedding_model_names
from bunko.bootstrap.ingest import IngestWing
from bunko.bootstrap.library import LibraryWing
from bunko.bootstrap.settings import Preferences
from bunko.bootstrap.sign_in import SignInServices, build_sign_in
from bunko.bootstrap.sources import SourcesWing
from bunko.config import Settings
from bunko.ports import MetadataStore
from bunko.services.accounts import (
    ApiKeyService,
    ApiKeyVerifier,
    AuditTrail,
    AuthService,
    Bills,
    Identity,
    JwtVerifier,
    LibraryService,
    LoginThrottle,
    PasswordHasher,
    TokenService,
    UserAdminService,
)
from bunko.services.chat import ConversationService
from bunko.services.conversion import ConversionService, VisionAdvisor
from bunko.services.embedding import ModelConfigService, ModelSwitch
from bunko.services.ingest import KnowledgeBaseService
from bunko.services.research import ResearchService
from bunko.services.settings import UserSettingsService, WorkspaceSettingsService


@dataclass
class AccountServices:
    auth: AuthService
    users: UserAdminService
    tokens: TokenService
    jwt_verifier: JwtVerifier
    model_configs: ModelConfigService
    user_settings: UserSettingsService
    workspace_settings: WorkspaceSettingsService
    libraries: LibraryService
    model_switch: ModelSwitch  # each workspace's embedding model
    # sign-in with an identity provider (BUNKO_OIDC_ISSUER); None: passwords only
    sign_in: SignInServices | None = None


def build_auth(
    settings: Settings,
    *,
    stores: AccountStores,
    metadata: MetadataStore,
    jwt_secret: str,
    audit: AuditTrail | None = None,
) -> AuthService:
    return AuthService(
        users=stores.users,
        metadata=metadata,
        hasher=PasswordHasher(
            at_once=settings.password_hashes_at_once, cost=settings.password_hash_cost
        ),
        tokens=TokenService(
            secret=jwt_secret,
            issuer=settings.jwt_issuer,
            lifetime=timedelta(minutes=settings.access_token_minutes),
        ),
        throttle=LoginThrottle(
            stores.login_attempts,
            max_failures=settings.login_max_failures,
            lockout=timedelta(seconds=settings.login_lockout_seconds),
            account_max_failures=settings.login_account_max_failures,
            account_lockout=timedelta(seconds=settings.login_account_lockout_seconds),
            address_max_failures=settings.login_address_max_failures,
        ),
        first_user_admin=settings.first_user_admin,
        library_named=stores.libraries.get_library_by_name,
        signup_open=settings.signup == "open",
        audit=audit,
    )


def build_account_services(
    settings: Settings,
    adapters: Adapters,
    account: AccountAdapters,
    *,
    knowledge_base: KnowledgeBaseService,
    switch: ModelSwitch,
    preferences: Preferences,
    research: ResearchService | None,
    conversations: ConversationService | None,
    audit: AuditTrail | None = None,
    forget_sources: Callable[[str], None] | None = None,
    forget_answers: Callable[[str], None] | None = None,
) -> AccountServices:
    """`account` with its JWT secret (a process that signs users in); `knowledge_base`: the
    library's files, which deleting a user clears."""
    assert account.jwt_secret is not None
    stores = account.stores
    auth = build_auth(
        settings,
        stores=stores,
        metadata=adapters.metadata,
        jwt_secret=account.jwt_secret,
        audit=audit,
    )
    users = UserAdminService(
        users=stores.users,
        auth=auth,
        knowledge_base=knowledge_base,
        model_configs=stores.model_configs,
        settings=stores.settings,
        libraries=stores.libraries,
        links=stores.links,
        api_keys=account.api_keys,
        research=research,
        conversations=conversations,
        forget_sources=forget_sources,
        forget_answers=forget_answers,
    )
    services = AccountServices(
        auth=auth,
        users=users,
        tokens=auth.tokens,
        jwt_verifier=JwtVerifier(auth.tokens, stores.users),
        model_configs=switch.configs,
        user_settings=preferences.user,
        workspace_settings=preferences.workspace,
        libraries=LibraryService(
            store=stores.libraries,
            users=stores.users,
            metadata=adapters.metadata,
            clear_workspace=users.clear_workspace,
            api_keys=account.api_keys,
            max_created=settings.libraries_per_user,
        ),
        model_switch=switch,
        sign_in=build_sign_in(settings, account=account, metadata=adapters.metadata, auth=auth),
    )
    if settings.admin_username and settings.admin_password:
        services.users.ensure_admin(
            settings.admin_username, settings.admin_password.get_secret_value()
        )
    return services


def build_bills(adapters: Adapters) -> Bills | None:
    """One count per person across their libraries: bytes, upload pace, conversations."""
    account = adapters.accounts
    if account is None:
        return None
    return Bills(users=account.stores.users, libraries=account.stores.libraries)


@dataclass(frozen=True)
class AccountWing:
    """Who calls (`identity`), and where accounts are configured the account services, API keys
    and what reads model configs and needs a caller: a library's files as the web app sees them
    (/upload, /knowledge-bases), the vision advisor and LibreOffice conversions (None elsewhere:
    their routes answer 503). Field names are the container's (`Services`)."""

    identity: Identity
    accounts: AccountServices | None
    apikeys: ApiKeyService | None
    knowledge_base: KnowledgeBaseService | None
    vision: VisionAdvisor | None
    conversions: ConversionService | None
    audit: AuditTrail | None  # the audit trail (None: no accounts, nothing recorded)


def build_accounts(
    settings: Settings,
    adapters: Adapters,
    ingest: IngestWing,
    library: LibraryWing,
    embedding: EmbeddingWing,
    preferences: Preferences | None,
    research: ResearchService | None,
    chat: ChatWing,
    sources: SourcesWing | None = None,
) -> AccountWing:
    """Over the wings below (deleting a user reaches into ingest, research and chat);
    `preferences`: None where this process signs nobody in (then no account services)."""
    account, metadata, blobs = adapters.accounts, adapters.metadata, adapters.blobs
    switch = embedding.model_switch
    identity = Identity([], auth_enabled=settings.auth == "on")
    if account is None or preferences is None:
        return AccountWing(identity, None, None, None, None, None, None)
    assert switch is not None
    audit = AuditTrail(account.audit) if account.audit is not None else None
    knowledge_base = KnowledgeBaseService(
        ingest=ingest.ingest,
        library=library.library,
        model_configs=account.stores.model_configs,
        embedding_models=embedding_model_names(settings, adapters),
        embedding=switch,
    )
    accounts = build_account_services(
        settings,
        adapters,
        account,
        knowledge_base=knowledge_base,
        switch=switch,
        preferences=preferences,
        research=research,
        conversations=chat.conversations,
        audit=audit,
        forget_sources=sources.sources.forget_workspace if sources and sources.sources else None,
        forget_answers=chat.answers.forget_library if chat.answers else None,
    )
    apikeys = ApiKeyService(
        store=account.api_keys,
        metadata=metadata,
        users=account.stores.users,
        role_of=accounts.libraries.current_role,
    )
    return AccountWing(
        identity=Identity(
            [accounts.jwt_verifier, ApiKeyVerifier(apikeys)],
            auth_enabled=settings.auth == "on",
        ),
        accounts=accounts,
        apikeys=apikeys,
        knowledge_base=knowledge_base,
        vision=VisionAdvisor(
            metadata=metadata,
            blobs=blobs,
            model_configs=account.stores.model_configs,
            max_file_bytes=settings.max_file_bytes,
        ),
        conversions=ConversionService(
            adapters.converter, blobs, max_file_bytes=settings.max_file_bytes
        ),
        audit=audit,
    )
