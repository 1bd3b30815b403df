"""The account services (auth, users, model configs, settings, libraries), wired from a
shape's account adapters, and the saved preferences that search and chat read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from bunko.bootstrap.adapters import AccountAdapters, AccountStores, Adapters
from bunko.bootstrap.sign_in import SignInServices, build_sign_in
from bunko.config import Settings
from bunko.ports import MetadataStore
from bunko.services.accounts import (
    AuthService,
    JwtVerifier,
    LibraryService,
    LoginThrottle,
    PasswordHasher,
    TokenService,
    UserAdminService,
)
from bunko.services.chat import ConversationService
from bunko.services.embedding import ModelConfigService, ModelSwitch
from bunko.services.ingest import KnowledgeBaseService
from bunko.services.research import ResearchService
from bunko.services.settings import UserSettingsService, WorkspaceSettingsService, default_settings


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


@dataclass(frozen=True)
class Preferences:
    """What users and workspaces saved: search and chat read it, the accounts edit it."""

    user: UserSettingsService
    workspace: WorkspaceSettingsService


def build_preferences(settings: Settings, adapters: Adapters, switch: ModelSwitch) -> Preferences:
    """What people and workspaces save (the settings wing's services), over the accounts'
    stores; the server's Settings give the defaults."""
    assert adapters.accounts is not None
    stores = adapters.accounts.stores
    return Preferences(
        user=UserSettingsService(
            stores.settings,
            stores.model_configs,
            defaults=default_settings(
                top_k=settings.search_limit, similarity_threshold=settings.min_score
            ),
            embedding=switch,
        ),
        workspace=WorkspaceSettingsService(
            stores.settings,
            min_score=settings.min_score,
            limit=settings.search_limit,
            folder_check=adapters.folder_check,
        ),
    )


def build_auth(
    settings: Settings, *, stores: AccountStores, metadata: MetadataStore, jwt_secret: str
) -> AuthService:
    return AuthService(
        users=stores.users,
        metadata=metadata,
        hasher=PasswordHasher(at_once=settings.password_hashes_at_once),
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
) -> AccountServices:
    """`account` with its JWT secret (a process that signs users in); `knowledge_base`: the
    library's files, which deleting a user clears."""
    assert account.jwt_secret is not None
    stores = account.stores
    auth = build_auth(
        settings, stores=stores, metadata=adapters.metadata, jwt_secret=account.jwt_secret
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
