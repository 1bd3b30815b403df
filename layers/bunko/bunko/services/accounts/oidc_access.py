"""OidcAccessVerifier: OAuth access tokens from the identity provider, for MCP over HTTP (the
MCP authorization spec: Bunko is a resource server, the issuer its authorization server).

A token is taken when the issuer signed it (its JWKS), it is current (`exp`) and it was issued
for this resource: the audience claim (`aud`, RFC 8707 / RFC 9068; Cognito's access tokens
name their client in `client_id` instead) holds the configured audience, by default the MCP
URL the request reached. An ID token is not an access token and is refused. The person must
have signed in to the web app once (their `sub` linked to a user); they then get what their
account may do, as with a Bunko token.
"""

from __future__ import annotations

from typing import Any

import jwt

from bunko.domain.auth import Principal
from bunko.errors import AuthenticationError
from bunko.ports.sign_in import OpenIdProvider
from bunko.services.accounts.linked_people import LinkedPeople
from bunko.services.accounts.tokens import principal_for


class OidcAccessVerifier:
    def __init__(
        self,
        *,
        provider: OpenIdProvider,
        people: LinkedPeople,
        audience: str | None = None,
        audience_claim: str = "aud",
    ) -> None:
        self.provider = provider
        self.people = people
        self.audience = audience
        self.audience_claim = audience_claim

    def verify(self, token: str, *, resource: str) -> Principal | None:
        """The principal of an access token from the issuer for `resource` (or the configured
        audience); None for a token that does not claim to come from the issuer (an API key,
        a Bunko token); AuthenticationError, saying why, for one that does and fails."""
        if not self._from_issuer(token):
            return None
        claims = self.provider.verified_claims(token)
        if "nonce" in claims or claims.get("token_use") == "id":
            raise AuthenticationError("an ID token is not an access token")
        expected = self.audience or resource
        if expected not in _values(claims.get(self.audience_claim)):
            raise AuthenticationError(f"the token is for another audience, not {expected}")
        user = self.people.existing(str(claims["sub"]))
        if user is None:
            raise AuthenticationError(
                "no Bunko account is linked to this identity: sign in to the web app once"
            )
        return principal_for(user)

    def _from_issuer(self, token: str) -> bool:
        try:
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return False
        return claims.get("iss") == self.provider.issuer


def _values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
