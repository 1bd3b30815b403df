"""Identity: turns a bearer token into a Principal, whichever kind of token it is.

Verifiers are tried in order (JWT for people, API keys for agents); each returns None for a
token it does not recognise. With auth off (embedded, loopback only) every caller is the local
user of the default workspace with every scope.
"""

from __future__ import annotations

from collections.abc import Sequence

from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.domain.auth import ALL_SCOPES, Principal
from bunko.errors import AuthenticationError
from bunko.ports import TokenVerifier

LOCAL_PRINCIPAL = Principal(
    workspace_id=DEFAULT_WORKSPACE_ID, scopes=frozenset(ALL_SCOPES), username="local", is_admin=True
)


class Identity:
    def __init__(
        self, verifiers: Sequence[TokenVerifier] = (), *, auth_enabled: bool = True
    ) -> None:
        self.verifiers = list(verifiers)
        self.auth_enabled = auth_enabled

    def authenticate(self, token: str | None) -> Principal:
        """The caller's principal; raises AuthenticationError for a missing or bad token."""
        if not self.auth_enabled:
            return LOCAL_PRINCIPAL
        if not token:
            raise AuthenticationError("missing bearer token")
        for verifier in self.verifiers:
            principal = verifier.verify(token)
            if principal is not None:
                return principal
        raise AuthenticationError("invalid or expired token")
