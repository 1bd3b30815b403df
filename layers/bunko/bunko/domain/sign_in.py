"""Sign-in with an identity provider (OpenID Connect): who a person is there, and what their
groups there give them here (docs/security.md, "Sign-in with an identity provider")."""

from __future__ import annotations

from dataclasses import dataclass

from bunko.domain.libraries import ROLES, Role


@dataclass(frozen=True)
class GroupRole:
    """A group at the identity provider gives its members `role` in the library `library`
    (a name; created on the first sign-in that needs it)."""

    library: str
    role: Role


def strongest(roles: list[Role]) -> Role:
    """The role that may do the most (a person in two groups of one library)."""
    return max(roles, key=ROLES.index)
