"""AuthorizationServerMetadata: Bunko's own RFC 8414 document in front of the identity
provider, for MCP clients (issue 47, point 3).

The MCP authorization spec (2025-11-25) has a client refuse an authorization server whose
metadata does not list `S256` in `code_challenge_methods_supported`. Cognito's discovery
document lists no such field, although its authorization endpoint takes S256 challenges (the
web app's sign-in uses them). Where the issuer's discovery does not list S256, Bunko names
itself as the authorization server in its protected-resource metadata and serves this
document: the issuer's own endpoints (authorization, token, keys, revocation), and S256.

The document's `issuer` is Bunko's URL, not the identity provider's: a client checks that the
metadata it fetched names the server the protected-resource metadata named (RFC 8414 §3.3), so
another issuer there would be refused. Tokens still come from, and are checked against, the
identity provider (services/accounts/oidc_access.py).
"""

from __future__ import annotations

from typing import Any

from bunko.errors import ServiceUnavailableError
from bunko.ports.sign_in import OpenIdProvider

S256 = "S256"
# What the issuer's discovery says and a client of Bunko's document needs as it is: the
# endpoints the client calls, and what an OpenID Connect discovery reader requires
COPIED = (
    "authorization_endpoint",
    "token_endpoint",
    "jwks_uri",
    "revocation_endpoint",
    "registration_endpoint",
    "userinfo_endpoint",
    "scopes_supported",
    "token_endpoint_auth_methods_supported",
    "subject_types_supported",
    "id_token_signing_alg_values_supported",
)


class AuthorizationServerMetadata:
    def __init__(self, provider: OpenIdProvider) -> None:
        self.provider = provider

    def stands_in(self) -> bool:
        """Whether Bunko must name itself as the authorization server: the issuer's discovery
        does not list S256 (or cannot be read now: Bunko's document then says why, 503)."""
        try:
            methods = self.provider.discovery().get("code_challenge_methods_supported")
        except ServiceUnavailableError:
            return True
        return not (isinstance(methods, list) and S256 in methods)

    def document(self, issuer: str) -> dict[str, Any]:
        """The RFC 8414 metadata Bunko serves as `issuer` (its own base URL);
        ServiceUnavailableError when the identity provider's discovery cannot be read."""
        upstream = self.provider.discovery()
        body: dict[str, Any] = {"issuer": issuer}
        body |= {name: upstream[name] for name in COPIED if upstream.get(name)}
        body |= {
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": [S256],
        }
        return body
