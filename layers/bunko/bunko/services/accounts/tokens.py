"""Access tokens: HS256 JWTs (PyJWT) with issuer, expiry and the user's token version.

A token names its user and the user's `token_version` at issue time; `JwtVerifier` checks
both against the store on every request, so a password change (which bumps the version)
or a deleted user invalidates every older token at once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import jwt

from bunko.domain import utcnow
from bunko.domain.accounts import User
from bunko.domain.auth import SCOPE_ADMIN, SCOPE_READ, SCOPE_RESEARCH, SCOPE_WRITE, Principal
from bunko.ports import UserStore

ALGORITHM = "HS256"
# A web session's token (kept in an HttpOnly cookie, http/routes/web_session.py) carries this
# audience: `decode` refuses any token with an audience, so it never works as a bearer token,
# and only `decode_session` reads it.
SESSION_AUDIENCE = "bunko:web-session"
USER_SCOPES = frozenset({SCOPE_READ, SCOPE_WRITE, SCOPE_RESEARCH})
ADMIN_SCOPES = USER_SCOPES | {SCOPE_ADMIN}


class TokenService:
    def __init__(
        self,
        *,
        secret: str,
        issuer: str,
        lifetime: timedelta,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        if len(secret) < 32:
            raise ValueError("the JWT signing secret must have at least 32 characters")
        self._secret = secret
        self.issuer = issuer
        self.lifetime = lifetime
        self._now = now

    def issue(self, user: User) -> str:
        now = self._now()
        claims = {
            "iss": self.issuer,
            "sub": user.id,
            "iat": now,
            "exp": now + self.lifetime,
            "ver": user.token_version,
        }
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM)

    def issue_session(self, user: User) -> str:
        """A web session's token: what a new tab trades for an access token (no bearer)."""
        now = self._now()
        claims = {
            "iss": self.issuer,
            "sub": user.id,
            "aud": SESSION_AUDIENCE,
            "iat": now,
            "exp": now + self.lifetime,
            "ver": user.token_version,
        }
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM)

    def decode_session(self, token: str) -> dict | None:
        """The claims of a valid, unexpired web session token; None otherwise."""
        return self._claims(token, audience=SESSION_AUDIENCE)

    def decode(self, token: str) -> dict | None:
        """The claims of a valid, unexpired token from this issuer; None otherwise (a session
        token too: it names an audience, which an access token does not)."""
        return self._claims(token, audience=None)

    def _claims(self, token: str, *, audience: str | None) -> dict | None:
        required = ["exp", "iat", "iss", "sub"] + (["aud"] if audience else [])
        try:
            return jwt.decode(
                token,
                self._secret,
                algorithms=[ALGORITHM],
                issuer=self.issuer,
                audience=audience,
                options={"require": required},
            )
        except jwt.PyJWTError:
            return None


def principal_for(user: User) -> Principal:
    return Principal(
        workspace_id=user.workspace_id,
        scopes=ADMIN_SCOPES if user.is_admin else USER_SCOPES,
        user_id=user.id,
        username=user.username,
        is_admin=user.is_admin,
    )


class JwtVerifier:
    """The TokenVerifier for people: a JWT from TokenService → the user's Principal."""

    def __init__(self, tokens: TokenService, users: UserStore) -> None:
        self.tokens = tokens
        self.users = users

    def verify(self, token: str) -> Principal | None:
        claims = self.tokens.decode(token)
        if claims is None:
            return None
        user = self.users.get_user(str(claims["sub"]))
        if user is None or claims.get("ver") != user.token_version:
            return None
        return principal_for(user)
