"""/auth/session (Bunko): the web app's sign-in kept across tabs and windows.

After a sign-in, `POST /auth/session` (with the access token) sets two cookies: the session
token (HttpOnly, SameSite=Strict, only sent to this path) and a CSRF token the page can read
(SameSite=Strict). A new tab trades them for an access token with `POST /auth/session/resume`,
which needs the CSRF token in `X-CSRF-Token` as well (double submit: another site can send the
cookie, never the header). Signing out (`POST /auth/logout`) clears both and ends every token
of the user; so does a password change or reset.
"""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Header, Request, Response

from bunko.errors import AuthenticationError, PermissionDeniedError
from bunko.http.deps import AccountsDep, CurrentPrincipal
from bunko.http.errors import error_responses
from bunko.http.routes.auth import LoggedIn
from bunko.http.session_cookies import (
    CSRF_COOKIE,
    CSRF_HEADER,
    SESSION_COOKIE,
    SESSION_PATH,
    set_session_cookies,
)
from bunko.operations.aurak import Message, UserPublic

router = APIRouter(prefix=SESSION_PATH, tags=["auth"])


@router.post("", response_model=Message, responses=error_responses(401, 403))
def keep_session(
    principal: CurrentPrincipal, accounts: AccountsDep, request: Request, response: Response
) -> Message:
    """Keep the signed-in person's session for other tabs of this browser (cookies)."""
    if principal.user_id is None or principal.api_key_id is not None:
        raise PermissionDeniedError("only a signed-in person has a web session")
    user = accounts.auth.user(principal.user_id)
    lifetime = int(accounts.tokens.lifetime.total_seconds())
    set_session_cookies(response, request, accounts.tokens.issue_session(user), max_age=lifetime)
    return Message(message="Session kept")


@router.post("/resume", response_model=LoggedIn, responses=error_responses(401))
def resume_session(
    accounts: AccountsDep,
    request: Request,
    response: Response,
    csrf: Annotated[str | None, Header(alias=CSRF_HEADER, max_length=200)] = None,
) -> LoggedIn:
    """An access token for this browser's session (the cookies of `POST /auth/session`);
    401 without them, without the matching `X-CSRF-Token`, or once the session ended."""
    token = request.cookies.get(SESSION_COOKIE)
    expected = request.cookies.get(CSRF_COOKIE)
    if not token or not csrf or not expected or not secrets.compare_digest(csrf, expected):
        raise AuthenticationError("no session in this browser: sign in")
    access, user = accounts.auth.resume(token)
    lifetime = int(accounts.tokens.lifetime.total_seconds())
    set_session_cookies(response, request, accounts.tokens.issue_session(user), max_age=lifetime)
    return LoggedIn(access_token=access, expires_in=lifetime, user=UserPublic.of(user))
