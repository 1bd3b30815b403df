"""Who is calling: a principal in one workspace, with scopes (DESIGN decision 5)."""

from __future__ import annotations

from dataclasses import dataclass, field

SCOPE_READ = "kb:read"
SCOPE_WRITE = "kb:write"
SCOPE_RESEARCH = "agent:research"
SCOPE_ADMIN = "admin"
ALL_SCOPES = (SCOPE_READ, SCOPE_WRITE, SCOPE_RESEARCH, SCOPE_ADMIN)


@dataclass(frozen=True)
class Principal:
    """A logged-in user (JWT) or an agent (API key). Every call filters by `workspace_id`."""

    workspace_id: str
    scopes: frozenset[str] = field(default_factory=frozenset)
    user_id: str | None = None
    api_key_id: str | None = None
    username: str | None = None
    is_admin: bool = False

    def has(self, scope: str) -> bool:
        return scope in self.scopes or SCOPE_ADMIN in self.scopes
