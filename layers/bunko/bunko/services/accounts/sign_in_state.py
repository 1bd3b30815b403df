"""What a sign-in with the identity provider keeps between leaving and coming back: `state`
(the callback must echo it: no one else's sign-in can be completed in this browser), `nonce`
(the ID token must carry it: no replayed token) and the PKCE verifier (the code is useless to
whoever intercepts it). The browser keeps them in a short-lived cookie, signed here, so any
instance of the API (several Lambdas) can finish the sign-in another one began.

The cookie is an HS256 JWT under a key of its own, derived from the server's JWT secret, with
an audience no access token carries: one cannot be taken for the other.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import jwt

from bunko.domain import utcnow
from bunko.errors import AuthenticationError

LIFETIME = timedelta(minutes=10)  # from leaving for the issuer to coming back
_AUDIENCE = "bunko:oidc-sign-in"


@dataclass(frozen=True)
class SignInState:
    state: str
    nonce: str
    verifier: str

    @classmethod
    def new(cls) -> SignInState:
        return cls(
            state=secrets.token_urlsafe(32),
            nonce=secrets.token_urlsafe(32),
            verifier=secrets.token_urlsafe(64),  # 86 characters: RFC 7636 allows 43 to 128
        )

    @property
    def challenge(self) -> str:
        """The S256 code challenge (RFC 7636 §4.2)."""
        digest = hashlib.sha256(self.verifier.encode("ascii")).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class SignInStates:
    def __init__(self, secret: str, *, now: Callable[[], datetime] = utcnow) -> None:
        self._key = hmac.new(secret.encode(), b"bunko oidc sign-in state", "sha256").hexdigest()
        self._now = now

    def seal(self, state: SignInState) -> str:
        now = self._now()
        claims = {
            "aud": _AUDIENCE,
            "iat": now,
            "exp": now + LIFETIME,
            "state": state.state,
            "nonce": state.nonce,
            "verifier": state.verifier,
        }
        return jwt.encode(claims, self._key, algorithm="HS256")

    def open(self, sealed: str | None, returned_state: str | None) -> SignInState:
        """The state kept for this browser, if the callback's `state` is its own."""
        if not sealed:
            raise AuthenticationError(
                "the sign-in was not started in this browser, or took too long"
            )
        try:
            claims = jwt.decode(
                sealed,
                self._key,
                algorithms=["HS256"],
                audience=_AUDIENCE,
                options={"require": ["exp", "aud"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise AuthenticationError("the sign-in took too long; try again") from exc
        except jwt.PyJWTError as exc:
            raise AuthenticationError("the sign-in state was not valid") from exc
        kept = SignInState(str(claims["state"]), str(claims["nonce"]), str(claims["verifier"]))
        if not returned_state or not hmac.compare_digest(kept.state, returned_state):
            raise AuthenticationError("the sign-in state did not match; try again")
        return kept
