"""API keys for agents: created once, shown once, stored only as a hash (DESIGN decision 5).

A key is `bk_` + 256 random bits (base64url). Because the secret has full entropy, a plain
SHA-256 of it is a safe verifier (no salt or slow hash needed, unlike a password), and the
hash doubles as the lookup key. Each key belongs to one workspace and carries scopes.

A key acts for the person who made it, with their rights as they are when it is used, not
as they were when it was made: on every use the key's scopes are capped by its maker's
current role in the key's library and their current admin flag. A maker who was deleted,
left the library or lost every right there leaves the key nothing (401). Only keys the
operator made on the machine (`bunko apikey create`, `OPERATOR`) carry their scopes as
given, the operator being outside the threat model.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Callable, Iterable

from bunko.domain import Workspace, new_id, utcnow
from bunko.domain.accounts import OPERATOR, ApiKey, User
from bunko.domain.auth import ALL_SCOPES, ROLE_SCOPES, SCOPE_ADMIN, Principal
from bunko.domain.libraries import Role
from bunko.errors import NotFoundError, ValidationError
from bunko.ports import ApiKeyStore, MetadataStore, UserStore

# A user's role in a workspace as it is now: "owner" of their own, their membership's role
# in a shared library, None where they have none (LibraryService.current_role).
RoleOf = Callable[[str, User], Role | None]

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
    def __init__(
        self,
        *,
        store: ApiKeyStore,
        metadata: MetadataStore,
        users: UserStore | None = None,
        role_of: RoleOf | None = None,
    ) -> None:
        self.store = store
        self.metadata = metadata
        # Without them (no accounts) only the operator's keys work.
        self.users = users
        self.role_of = role_of

    def create(
        self,
        *,
        workspace_id: str,
        scopes: Iterable[str] | str,
        name: str = "",
        created_by: str | None = OPERATOR,
    ) -> tuple[ApiKey, str]:
        """A new key for the workspace (created if new), made by `created_by` (a user id,
        or OPERATOR for the machine's operator). Returns the record and the secret, which
        is not stored anywhere and cannot be shown again."""
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
            created_by=created_by,
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
        if key.created_by == OPERATOR:
            return self._principal(key, key.scopes, role=None)
        maker = self._maker(key)
        if maker is None:
            return None
        role = self.role_of(key.workspace_id, maker) if self.role_of else None
        if role is None:
            return None  # no right left in the key's library
        scopes = set(key.scopes)
        if not maker.is_admin:
            scopes.discard(SCOPE_ADMIN)
        own = key.workspace_id == maker.workspace_id
        if not own:
            scopes &= ROLE_SCOPES[role]  # never admin in a shared library
        return self._principal(key, frozenset(scopes), role=None if own else role)

    def _maker(self, key: ApiKey) -> User | None:
        if key.created_by is None or self.users is None:
            return None  # made before makers were recorded: nobody vouches for it
        return self.users.get_user(key.created_by)

    @staticmethod
    def _principal(key: ApiKey, scopes: frozenset[str], *, role: str | None) -> Principal:
        return Principal(
            workspace_id=key.workspace_id,
            scopes=scopes,
            api_key_id=key.id,
            username=key.name or None,
            is_admin=SCOPE_ADMIN in scopes,
            role=role,
            key_maker=key.created_by,
        )

    def list_keys(self, workspace_id: str | None = None) -> list[ApiKey]:
        return self.store.list_keys(workspace_id)

    def keys_for(self, principal: Principal) -> list[ApiKey]:
        """The keys of the caller's library the caller may see and revoke: every one for an
        owner (and in one's own library), one's own for any other member."""
        keys = self.store.list_keys(principal.workspace_id)
        if principal.role in (None, "owner"):
            return keys
        return [k for k in keys if k.created_by == principal.user_id]

    def revoke_for(self, principal: Principal, key_id: str) -> ApiKey:
        """Revoke a key the caller may manage (keys_for); any other is "not found"."""
        if all(k.id != key_id for k in self.keys_for(principal)):
            raise NotFoundError(f"API key {key_id} not found or already revoked")
        return self.revoke(key_id)

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


def revoke_keys(
    store: ApiKeyStore, *, workspace_id: str | None = None, made_by: str | None = None
) -> int:
    """Revoke the live keys of a workspace (a deleted library) or made by a user (a deleted
    user); how many. Their use is refused already (principal_for); this keeps lists true."""
    when, count = utcnow(), 0
    for key in store.list_keys(workspace_id):
        if key.revoked_at is None and (made_by is None or key.created_by == made_by):
            count += store.revoke(key.id, when)
    return count


class ApiKeyVerifier:
    """`services.identity.TokenVerifier` for API keys."""

    def __init__(self, keys: ApiKeyService) -> None:
        self.keys = keys

    def verify(self, token: str) -> Principal | None:
        return self.keys.principal_for(token)
