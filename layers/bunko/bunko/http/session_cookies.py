"""The web session's cookies (http/routes/web_session.py): set at sign-in, cleared at sign-out."""

from __future__ import annotations

import secrets

from fastapi import Request, Response

SESSION_PATH = "/auth/session"
SESSION_COOKIE = "bunko_session"
CSRF_COOKIE = "bunko_csrf"
CSRF_HEADER = "X-CSRF-Token"


def set_session_cookies(response: Response, request: Request, token: str, *, max_age: int) -> None:
    """Both cookies, for `max_age` seconds."""
    secure = request.url.scheme == "https"
    root = request.scope.get("root_path", "")
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=max_age,
        path=root + SESSION_PATH,
        secure=secure,
        httponly=True,
        samesite="strict",
    )
    response.set_cookie(
        CSRF_COOKIE,
        secrets.token_urlsafe(32),
        max_age=max_age,
        path=root + "/",
        secure=secure,
        httponly=False,
        samesite="strict",
    )


def clear_session_cookies(response: Response, request: Request) -> None:
    root = request.scope.get("root_path", "")
    response.delete_cookie(SESSION_COOKIE, path=root + SESSION_PATH)
    response.delete_cookie(CSRF_COOKIE, path=root + "/")
