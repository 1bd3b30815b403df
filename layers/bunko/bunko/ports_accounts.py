"""The ports of the account side: users, login attempts, model configs, settings, secrets,
document conversion — with the plain records they store.

Kept apart from `bunko.ports` (the knowledge-base ports) so the two sides evolve
independently; services depend on these Protocols only.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from bunko.domain import utcnow

MODEL_PROVIDERS = ("openai", "gemini", "bedrock", "local")
MODEL_TYPES = ("llm", "embedding", "rerank")


def username_key(username: str) -> str:
    """The form usernames are unique in: NFKC, case-folded ("Ｂｏｂ" and "bob" collide)."""
    return unicodedata.normalize("NFKC", username).casefold()


@dataclass
class User:
    id: str
    username: str
    password_hash: str
    workspace_id: str  # the personal workspace created at registration
    is_admin: bool = False
    # Tokens carry this number; bumping it (password change) invalidates older tokens.
    token_version: int = 0
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)


@dataclass
class LoginAttempts:
    """Consecutive failed logins for one username key, and how long it stays locked."""

    key: str
    failures: int = 0
    locked_until: datetime | None = None
    last_failure: datetime | None = None


@dataclass
class ModelConfig:
    id: str
    workspace_id: str
    name: str
    provider: str  # one of MODEL_PROVIDERS
    model_id: str
    type: str  # one of MODEL_TYPES
    base_url: str | None = None
    api_key_encrypted: str | None = None  # SecretCipher output, never the key itself
    supports_vision: bool = False
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)


class UserStore(Protocol):
    def add_user(self, user: User) -> None:
        """Insert; raises ConflictError when the username (by username_key) is taken."""

    def save_user(self, user: User) -> None: ...
    def get_user(self, user_id: str) -> User | None: ...
    def get_user_by_username(self, username: str) -> User | None: ...
    def list_users(self) -> list[User]:
        """Oldest first."""

    def count_admins(self) -> int: ...
    def delete_user(self, user_id: str) -> bool:
        """Delete; False if absent. Raises ConflictError, atomically, instead of deleting the
        last admin (two concurrent deletes must not leave the server without one)."""


class LoginAttemptStore(Protocol):
    def get_attempts(self, key: str) -> LoginAttempts | None: ...
    def save_attempts(self, attempts: LoginAttempts) -> None: ...
    def clear_attempts(self, key: str) -> None: ...


class ModelConfigStore(Protocol):
    def add_model_config(self, config: ModelConfig) -> None:
        """Insert; raises ConflictError when the name is taken in the workspace."""

    def save_model_config(self, config: ModelConfig) -> None:
        """Update; raises ConflictError when the new name is taken in the workspace."""

    def get_model_config(self, workspace_id: str, config_id: str) -> ModelConfig | None: ...
    def list_model_configs(self, workspace_id: str) -> list[ModelConfig]:
        """Oldest first."""

    def delete_model_config(self, workspace_id: str, config_id: str) -> bool: ...
    def delete_workspace_model_configs(self, workspace_id: str) -> int: ...


class SettingsStore(Protocol):
    """JSON settings documents by (scope, owner): "user"/user id, "workspace"/workspace id."""

    def get_settings(self, scope: str, owner: str) -> dict[str, Any] | None: ...
    def put_settings(self, scope: str, owner: str, values: dict[str, Any]) -> None: ...
    def delete_settings(self, scope: str, owner: str) -> None: ...
    def list_settings(self, scope: str) -> list[tuple[str, dict[str, Any]]]: ...


class SecretCipher(Protocol):
    """Encrypts secrets at rest (Fernet locally; KMS on AWS)."""

    def encrypt(self, plaintext: str) -> str: ...
    def decrypt(self, token: str) -> str:
        """Raises ValueError when the token was not made with this key."""


class DocumentConverter(Protocol):
    """Office documents → PDF (LibreOffice locally)."""

    def available(self) -> bool: ...
    def version(self) -> str | None: ...
    def convert_to_pdf(self, data: bytes, filename: str) -> bytes:
        """Raises ParseError when the file cannot be converted, ServiceUnavailableError
        when the converter is missing or timed out."""
