"""Ports of sign-in with an identity provider: the issuer itself (OpenID Connect), and the
links from a person there (issuer, subject) to a Bunko user."""

from __future__ import annotations

from typing import Any, Protocol


class IdentityLinkStore(Protocol):
    def linked_user(self, issuer: str, subject: str) -> str | None:
        """The id of the user linked to (issuer, subject); None if none is."""

    def link(self, issuer: str, subject: str, user_id: str) -> None:
        """Link (issuer, subject) to a user; ConflictError, and nothing written, when it is
        linked already (two first sign-ins of one person at once make one link)."""

    def unlink(self, issuer: str, subject: str) -> bool: ...
    def is_linked(self, issuer: str, user_id: str) -> bool:
        """Whether the user is someone at `issuer` (signed in with it at least once)."""

    def forget_user(self, user_id: str) -> int:
        """Remove every link to the user (a deleted user); how many."""


class OpenIdProvider(Protocol):
    """An OpenID Connect issuer, found by its discovery document. Raises AuthenticationError
    for what it refuses or what does not verify, ServiceUnavailableError when unreachable."""

    issuer: str

    def discovery(self) -> dict[str, Any]:
        """The issuer's discovery document (<issuer>/.well-known/openid-configuration),
        naming this issuer; ServiceUnavailableError when it cannot be read."""

    def authorization_url(self, params: dict[str, str]) -> str:
        """The authorization endpoint with `params` as its query."""

    def redeem_code(self, *, code: str, redirect_uri: str, code_verifier: str) -> dict[str, Any]:
        """The token endpoint's answer to an authorization code (id_token, access_token...)."""

    def verified_claims(self, token: str) -> dict[str, Any]:
        """The claims of a JWT the issuer signed (a key of its JWKS, fetched again when the
        token names a key not yet seen: rotation), with `iss` this issuer and `exp` not past.
        Who the token is for (`aud`) is the caller's to check."""
