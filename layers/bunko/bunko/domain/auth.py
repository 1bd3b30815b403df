"""Who is calling: a principal in one workspace, with scopes (DESIGN decision 5)."""

from __future__ import annotations

from dataclasses import dataclass, field

SCOPE_READ = "kb:read"
SCOPE_WRITE = "kb:write"
SCOPE_RESEARCH = "agent:research"
SCOPE_ADMIN = "admin"
ALL_SCOPES = (SCOPE_READ, SCOPE_WRITE, SCOPE_RESEARCH, SCOPE_ADMIN)
# What each role in a shared library may do with its documents (domain/libraries).
ROLE_SCOPES: dict[str, frozenset[str]] = {
    "viewer": frozenset({SCOPE_READ}),
    "editor": frozenset({SCOPE_READ, SCOPE_WRITE, SCOPE_RESEARCH}),
    "owner": frozenset({SCOPE_READ, SCOPE_WRITE, SCOPE_RESEARCH}),
}
LIBRARY_SCOPES = frozenset({SCOPE_READ, SCOPE_WRITE, SCOPE_RESEARCH})


@dataclass(frozen=True)
class Principal:
    """A logged-in user (JWT) or an agent (API key). Every call filters by `workspace_id`."""

    workspace_id: str
    scopes: frozenset[str] = field(default_factory=frozenset)
    user_id: str | None = None
    api_key_id: str | None = None
    username: str | None = None
    is_admin: bool = False
    # In a shared library (domain/libraries): the caller's role there, which bounds what they
    # may do with its documents, whatever else they may do; None: their own library.
    role: str | None = None
    # An API key's maker (a user id, or accounts.OPERATOR): the person the key acts for,
    # whose current rights bound it (services/accounts/apikeys.py).
    key_maker: str | None = None

    def manages(self) -> bool:
        """May change the library itself (its model configs and embedding model, its
        members, its keys): its owner, or anyone in their own library."""
        return self.role in (None, "owner")

    def has(self, scope: str) -> bool:
        in_library = self.role is not None and scope in LIBRARY_SCOPES
        if in_library and scope not in ROLE_SCOPES.get(self.role or "", frozenset()):
            return False
        return scope in self.scopes or SCOPE_ADMIN in self.scopes
