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

`sign_out_url` is where the browser goes after Bunko's own sign-out, so that the identity
provider's session ends too (otherwise the next "Sign in with …" passes straight through).
"""

from __future__ import annotations

import hmac
import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from bunko.domain.accounts import User
from bunko.domain.audit import SIGN_IN, AuditEvent
from bunko.errors import AuthenticationError, ServiceUnavailableError
from bunko.ports.sign_in import OpenIdProvider
from bunko.services.accounts.audit import AuditTrail
from bunko.services.accounts.group_roles import GroupRoles
from bunko.services.accounts.linked_people import LinkedPeople
from bunko.services.accounts.sign_in_state import SignInState, SignInStates
from bunko.services.accounts.tokens import TokenService

MAX_SUBJECT = 255  # OpenID Connect Core §2: at most 255 ASCII characters
# A Cognito user pool's issuer; its sign-in domain (where /logout is) is another host
COGNITO_ISSUER = re.compile(r"^cognito-idp\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$")
log = logging.getLogger(__name__)


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
        audit: AuditTrail | None = None,
    ) -> None:
        self.audit = audit  # a sign-in taken is one event, as a password's (AuthService)
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
        url = self.provider.authorization_url(
            {
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": redirect_uri,
                "scope": self.scopes,
                "state": kept.state,
                "nonce": kept.nonce,
                "code_challenge": kept.challenge,
                "code_challenge_method": "S256",
            }
        )
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
        token = self.tokens.issue(user)
        if self.audit is not None:  # the door's note gives the client; it adds no event of its own
            self.audit.record(
                AuditEvent(
                    action=SIGN_IN,
                    outcome="ok",
                    status=302,  # what the callback answers: the way back to the web app
                    user_id=user.id,
                    library_id=user.workspace_id,
                )
            )
        return token, user

    def sign_out_url(self, user_id: str, *, return_to: str) -> str | None:
        """Where to send the browser of a user who just signed out of Bunko, to end their
        session at the identity provider and come back to `return_to`: the discovery's
        `end_session_endpoint` (OpenID Connect RP-Initiated Logout, with `client_id` and
        `post_logout_redirect_uri`), else a Cognito pool's `/logout` on its sign-in domain
        (`client_id`, `logout_uri`). None for a user who never signed in with the provider,
        and for a provider that offers neither (or cannot be reached now)."""
        if not self.people.links.is_linked(self.people.issuer, user_id):
            return None
        try:
            discovery = self.provider.discovery()
        except ServiceUnavailableError:
            log.warning("sign-out: the identity provider's discovery could not be read")
            return None
        end_session = discovery.get("end_session_endpoint")
        if isinstance(end_session, str) and end_session.startswith(("https://", "http://")):
            query = {"client_id": self.client_id, "post_logout_redirect_uri": return_to}
            return end_session + ("&" if "?" in end_session else "?") + urlencode(query)
        return cognito_logout_url(
            self.provider.issuer, discovery, client_id=self.client_id, return_to=return_to
        )

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


def cognito_logout_url(
    issuer: str, discovery: dict[str, Any], *, client_id: str, return_to: str
) -> str | None:
    """A Cognito pool's sign-out address: `/logout` on the domain its authorization endpoint
    is on (Cognito's discovery names no end_session_endpoint); `return_to` must be one of the
    app client's sign-out URLs. None when `issuer` is not a Cognito pool."""
    if not COGNITO_ISSUER.match(urlsplit(issuer).hostname or ""):
        return None
    authorize = urlsplit(str(discovery.get("authorization_endpoint") or ""))
    if authorize.scheme != "https" or not authorize.netloc:
        return None
    query = urlencode({"client_id": client_id, "logout_uri": return_to})
    return f"https://{authorize.netloc}/logout?{query}"
