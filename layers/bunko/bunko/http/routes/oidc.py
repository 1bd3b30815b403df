"""/auth/oidc: sign-in with the identity provider (OpenID Connect), for the web app.

The server is the relying party; the web app keeps its bearer token model. `GET /login`
sends the browser to the issuer (the sign-in's state, nonce and PKCE verifier in a signed,
HttpOnly, SameSite=Lax cookie that lives ten minutes); `GET /callback` finishes the sign-in
and sends the browser to the web app with a Bunko access token in the URL's fragment
(`#oidc_token=…`), which browsers never send to a server, so it stays out of every log; or
with `#oidc_error=<message>`. No failure of a sign-in answers a 500.
"""

from __future__ import annotations

import logging
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse
from pydantic import BaseModel

from bunko.bootstrap import Services
from bunko.config import Settings
from bunko.errors import BunkoError, NotFoundError
from bunko.http.deps import ServicesDep
from bunko.http.errors import error_responses
from bunko.services.accounts import OidcSignIn

log = logging.getLogger(__name__)
router = APIRouter(prefix="/auth/oidc", tags=["auth"])
COOKIE = "bunko_oidc"
COOKIE_SECONDS = 600  # as services/accounts/sign_in_state.LIFETIME
NO_STORE = {"Cache-Control": "no-store"}


class OidcConfig(BaseModel):
    enabled: bool  # false: passwords only, no button
    loginUrl: str | None = None  # where the "Sign in with …" button goes
    providerName: str | None = None  # what the button names


@router.get("/config", response_model=OidcConfig)
def oidc_config(request: Request, services: ServicesDep) -> OidcConfig:
    """Whether people may sign in with an identity provider, and where the web app's button
    goes."""
    web = _web_sign_in(services)
    if web is None:
        return OidcConfig(enabled=False)
    return OidcConfig(
        enabled=True, loginUrl=str(request.url_for("oidc_login")), providerName=web.provider_name
    )


@router.get(
    "/login",
    status_code=302,
    response_class=RedirectResponse,
    name="oidc_login",
    responses={302: {"description": "To the identity provider"}, **error_responses(404)},
)
def oidc_login(request: Request, services: ServicesDep) -> RedirectResponse:
    """Start a sign-in: a redirect to the identity provider (authorization code with PKCE).
    404 when no identity provider is configured."""
    web = _signing_in(services)
    try:
        start = web.begin(_redirect_uri(request, services.settings))
    except BunkoError as exc:  # the issuer could not be reached
        return _to_web_app(request, services.settings, "oidc_error", str(exc))
    response = RedirectResponse(start.url, status_code=302, headers=NO_STORE)
    response.set_cookie(COOKIE, start.cookie, max_age=COOKIE_SECONDS, **_cookie(request))
    return response


@router.get(
    "/callback",
    status_code=302,
    response_class=RedirectResponse,
    name="oidc_callback",
    responses={
        302: {"description": "To the web app, signed in or with the reason not"},
        **error_responses(404),
    },
)
def oidc_callback(
    request: Request,
    services: ServicesDep,
    code: Annotated[str | None, Query(max_length=4096)] = None,
    state: Annotated[str | None, Query(max_length=512)] = None,
    error: Annotated[str | None, Query(max_length=256)] = None,
) -> RedirectResponse:
    """Where the identity provider sends the browser back: to the web app with
    `#oidc_token=<a Bunko access token>`, or `#oidc_error=<why not>`."""
    web = _signing_in(services)
    try:
        token, _ = web.finish(
            sealed=request.cookies.get(COOKIE),
            state=state,
            code=code,
            error=error,
            redirect_uri=_redirect_uri(request, services.settings),
        )
        response = _to_web_app(request, services.settings, "oidc_token", token)
    except BunkoError as exc:
        response = _to_web_app(request, services.settings, "oidc_error", str(exc))
    except Exception:  # a bug or a store's failure: said as such, never a 500 page
        log.exception("sign-in with the identity provider failed")
        response = _to_web_app(request, services.settings, "oidc_error", "the sign-in failed")
    response.delete_cookie(COOKIE, **_cookie(request))  # one sign-in, one use
    return response


def _web_sign_in(services: Services) -> OidcSignIn | None:
    accounts = services.accounts
    return accounts.sign_in.web if accounts and accounts.sign_in else None


def _signing_in(services: Services) -> OidcSignIn:
    web = _web_sign_in(services)
    if web is None:
        raise NotFoundError("sign-in with an identity provider is not configured")
    return web


def _redirect_uri(request: Request, settings: Settings) -> str:
    return settings.oidc_redirect_uri or str(request.url_for("oidc_callback"))


def _cookie(request: Request) -> dict:
    return {
        "path": request.scope.get("root_path", "") + router.prefix,
        "secure": request.url.scheme == "https",
        "httponly": True,
        "samesite": "lax",  # sent on the issuer's top-level redirect back, not on a POST
    }


def _to_web_app(request: Request, settings: Settings, key: str, value: str) -> RedirectResponse:
    # The configured web app, or this server's own: never an address a caller chooses.
    home = (settings.web_app_url or str(request.base_url)).rstrip("/") + "/"
    return RedirectResponse(f"{home}#{key}={quote(value, safe='')}", 302, headers=NO_STORE)
