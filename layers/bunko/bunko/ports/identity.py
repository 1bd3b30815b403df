"""Token verification: JWTs for people, API keys for agents."""

from __future__ import annotations

from typing import Protocol

from bunko.domain.auth import Principal


class TokenVerifier(Protocol):
    def verify(self, token: str) -> Principal | None:
        """The principal for a token this verifier recognises; None for any other token."""
