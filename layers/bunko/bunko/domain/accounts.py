"""Records of the account side: users, login attempts, model configs and agents' API keys."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from datetime import datetime

from bunko.domain.documents import utcnow

MODEL_PROVIDERS = ("openai", "gemini", "bedrock", "local")
MODEL_TYPES = ("llm", "embedding", "rerank")
# The longest vector Bunko takes from an embedding model (BUNKO_OPENAI_EMBEDDING_DIMENSIONS'
# bound too): the largest models answer 4096; OpenSearch's knn_vector stops at 16,000.
MAX_EMBEDDING_DIMENSION = 16384


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


# `ApiKey.created_by` of a key the operator made on the machine (`bunko apikey create`): no
# user's rights bound it. User ids are UUIDs, so this never names a user.
OPERATOR = "operator"


@dataclass(frozen=True)
class ApiKey:
    """A stored key: never the secret, only its hash and a short display prefix."""

    id: str
    workspace_id: str
    scopes: frozenset[str]
    key_hash: str
    prefix: str
    name: str = ""
    created_at: datetime = field(default_factory=utcnow)
    revoked_at: datetime | None = None
    # Its maker: a user id (their current rights bound the key at every use), OPERATOR, or
    # None for a key made before makers were recorded (refused: nobody vouches for it).
    created_by: str | None = None
