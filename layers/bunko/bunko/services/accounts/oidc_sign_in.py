"""OidcSignIn: people sign in with the identity provider (OpenID Connect, the authorization
code flow with PKCE, Bunko the relying party on the server side), and leave with an ordinary
Bunko access token (docs/security.md, "Sign-in with an identity provider").

`begin` sends the browser to the issuer with a fresh state, nonce and S256 code challenge,
kept in the sealed cookie (sign_in_state.py). `finish`, at the callback, checks the state,
redeems the code with the verifier, checks the ID token (the issuer's signature and `iss`,
`exp`; here `aud` is this client, `azp` when there are several audiences, and `nonce`), and
only then finds or creates the linked user and makes their memberships what their groups say.
Anything wrong raises AuthenticationError (or ServiceUnavailableError) with a short message
for the person, before any user is created.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any

from bunko.domain.accounts import User
from bunko.errors import AuthenticationError
from bunko.ports.sign_in import OpenIdProvider
from bunko.services.accounts.group_roles import GroupRoles
from bunko.services.accounts.linked_people import LinkedPeople
from bunko.services.accounts.sign_in_state import SignInState, SignInStates
from bunko.services.accounts.tokens import TokenService

MAX_SUBJECT = 255  # OpenID Connect Core §2: at most 255 ASCII characters


@dataclass(frozen=True)
class SignInStart:
    url: str  # the issuer's authorization endpoint, with this sign-in's parameters
    cookie: str  # the sealed state, for the browser to bring back to the callback


class OidcSignIn:
    def __init__(
        self,
        *,
        provider: OpenIdProvider,
        client_id: str,
        scopes: str,
        people: LinkedPeople,
        roles: GroupRoles,
        tokens: TokenService,
        states: SignInStates,
        provider_name: str,
    ) -> None:
        self.provider = provider
        self.client_id = client_id
        self.scopes = scopes
        self.people = people
        self.roles = roles
        self.tokens = tokens
        self.states = states
        self.provider_name = provider_name

    def begin(self, redirect_uri: str) -> SignInStart:
        kept = SignInState.new()
        url = self.provider.authorization_url({
            "response_type": "code", "client_id": self.client_id, "redirect_uri": redirect_uri,
            "scope": self.scopes, "state": kept.state, "nonce": kept.nonce,
            "code_challenge": kept.challenge, "code_challenge_method": "S256",
        })  # fmt: skip
        return SignInStart(url=url, cookie=self.states.seal(kept))

    def finish(
        self,
        *,
        sealed: str | None,
        state: str | None,
        code: str | None,
        error: str | None,
        redirect_uri: str,
    ) -> tuple[str, User]:
        """(a Bunko access token, the user) for a callback from the issuer."""
        if error:
            if error == "access_denied":
                raise AuthenticationError("the sign-in was cancelled or refused")
            raise AuthenticationError(f"the identity provider refused the sign-in ({error[:64]})")
        kept = self.states.open(sealed, state)
        if not code:
            raise AuthenticationError("the identity provider sent no authorization code")
        answer = self.provider.redeem_code(
            code=code, redirect_uri=redirect_uri, code_verifier=kept.verifier
        )
        id_token = answer.get("id_token")
        if not isinstance(id_token, str):
            raise AuthenticationError("the identity provider sent no ID token")
        claims = self.provider.verified_claims(id_token)
        self._check(claims, kept)
        groups = self.roles.groups(claims)  # refused before anyone is created
        user = self.people.person(claims)
        self.roles.sync(user.id, groups)
        return self.tokens.issue(user), user

    def _check(self, claims: dict[str, Any], kept: SignInState) -> None:
        audience = claims.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience
        if not isinstance(audiences, list) or self.client_id not in audiences:
            raise AuthenticationError("the ID token was issued to another client")
        azp = claims.get("azp")
        if (len(audiences) > 1 or azp is not None) and azp != self.client_id:
            raise AuthenticationError("the ID token was issued to another client")
        nonce = claims.get("nonce")
        if not isinstance(nonce, str) or not hmac.compare_digest(nonce, kept.nonce):
            raise AuthenticationError("the ID token was not issued for this sign-in")
        subject = claims.get("sub")
        if not isinstance(subject, str) or not 0 < len(subject) <= MAX_SUBJECT:
            raise AuthenticationError("the ID token names no valid subject")
