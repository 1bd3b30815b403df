"""API keys for agents: created once, shown once, stored only as a hash (DESIGN decision 5).

A key is `bk_` + 256 random bits (base64url). Because the secret has full entropy, a plain
SHA-256 of it is a safe verifier (no salt or slow hash needed, unlike a password), and the
hash doubles as the lookup key. Each key belongs to one workspace and carries scopes.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterable

from bunko.domain import Workspace, new_id, utcnow
from bunko.domain.accounts import ApiKey
from bunko.domain.auth import ALL_SCOPES, SCOPE_ADMIN, Principal
from bunko.errors import NotFoundError, ValidationError
from bunko.ports import ApiKeyStore, MetadataStore

KEY_PREFIX = "bk_"
MAX_NAME_LENGTH = 100


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def parse_scopes(scopes: Iterable[str] | str) -> frozenset[str]:
    """Scopes from a list or a comma/space separated string; refuses unknown ones."""
    if isinstance(scopes, str):
        scopes = scopes.replace(",", " ").split()
    result = frozenset(s.strip() for s in scopes if s.strip())
    if not result:
        raise ValidationError(f"give at least one scope: {', '.join(ALL_SCOPES)}")
    unknown = sorted(result - set(ALL_SCOPES))
    if unknown:
        raise ValidationError(
            f"unknown scope(s) {', '.join(unknown)}; known scopes: {', '.join(ALL_SCOPES)}"
        )
    return result


class ApiKeyService:
    def __init__(self, *, store: ApiKeyStore, metadata: MetadataStore) -> None:
        self.store = store
        self.metadata = metadata

    def create(
        self, *, workspace_id: str, scopes: Iterable[str] | str, name: str = ""
    ) -> tuple[ApiKey, str]:
        """A new key for the workspace (created if new). Returns the record and the secret,
        which is not stored anywhere and cannot be shown again."""
        try:
            workspace_id = str(uuid.UUID(workspace_id))
        except ValueError as exc:
            raise ValidationError(f"workspace must be a UUID, got {workspace_id!r}") from exc
        if len(name) > MAX_NAME_LENGTH:
            raise ValidationError(f"name is longer than {MAX_NAME_LENGTH} characters")
        parsed = parse_scopes(scopes)
        if self.metadata.get_workspace(workspace_id) is None:
            self.metadata.ensure_workspace(Workspace(id=workspace_id, name=name or workspace_id))
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        key = ApiKey(
            id=new_id(),
            workspace_id=workspace_id,
            scopes=parsed,
            key_hash=hash_key(secret),
            prefix=secret[:10],
            name=name,
        )
        self.store.add(key)
        return key, secret

    def principal_for(self, secret: str) -> Principal | None:
        """The principal of a valid, unrevoked key; None for anything else."""
        if not secret.startswith(KEY_PREFIX):
            return None  # not ours: let the next verifier (JWT) try
        key = self.store.find_by_hash(hash_key(secret))
        if key is None or key.revoked_at is not None:
            return None
        return Principal(
            workspace_id=key.workspace_id,
            scopes=key.scopes,
            api_key_id=key.id,
            username=key.name or None,
            is_admin=SCOPE_ADMIN in key.scopes,
        )

    def list_keys(self, workspace_id: str | None = None) -> list[ApiKey]:
        return self.store.list_keys(workspace_id)

    def revoke(self, key_id: str, *, workspace_id: str | None = None) -> ApiKey:
        """Revoke a key; with `workspace_id`, only a key of that workspace (another
        workspace's key is "not found", as if it did not exist)."""
        if workspace_id is not None:
            found = self.store.get(key_id)
            if found is None or found.workspace_id != workspace_id:
                raise NotFoundError(f"API key {key_id} not found or already revoked")
        if not self.store.revoke(key_id, utcnow()):
            raise NotFoundError(f"API key {key_id} not found or already revoked")
        key = self.store.get(key_id)
        assert key is not None
        return key


class ApiKeyVerifier:
    """`services.identity.TokenVerifier` for API keys."""

    def __init__(self, keys: ApiKeyService) -> None:
        self.keys = keys

    def verify(self, token: str) -> Principal | None:
        return self.keys.principal_for(token)
