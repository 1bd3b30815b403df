"""aurak's /auth: register, login (a JWT), change password (invalidates older tokens)."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from bunko.errors import PermissionDeniedError
from bunko.http.deps import AccountsDep, CurrentPrincipal, ServicesDep
from bunko.http.errors import error_responses
from bunko.http.session_cookies import (
    SESSION_COOKIE,
    clear_session_cookies,
    set_session_cookies,
)
from bunko.http.sign_in_turns import in_turn
from bunko.operations.aurak import PASSWORD_FIELD, USERNAME_FIELD, Message, UserPublic

router = APIRouter(prefix="/auth", tags=["auth"])


def client_address(request: Request) -> str:
    """The client's address as the server sees it: the TCP peer (uvicorn honours
    X-Forwarded-For only from the proxies it trusts, 127.0.0.1 by default), or API Gateway's
    source IP under Mangum. Never a header the client itself may set."""
    return request.client.host if request.client else ""


class Credentials(BaseModel):
    username: Annotated[str, USERNAME_FIELD]
    password: Annotated[str, PASSWORD_FIELD]


class Registered(BaseModel):
    message: str
    user: UserPublic


class LoggedIn(BaseModel):
    access_token: str
    token_type: str = "bearer"  # noqa: S105 - the OAuth token type, not a secret
    expires_in: int  # seconds
    user: UserPublic


class PasswordChange(BaseModel):
    currentPassword: Annotated[str, PASSWORD_FIELD]
    newPassword: Annotated[str, PASSWORD_FIELD]


class PasswordChanged(BaseModel):
    message: str
    access_token: str  # the old tokens stop working; this one replaces them


class Signup(BaseModel):
    open: bool  # whether POST /auth/register accepts a new account now


@router.get("/signup", response_model=Signup)
def signup(accounts: AccountsDep) -> Signup:
    """Whether anyone may create an account: BUNKO_SIGNUP=open, or no admin exists yet. The
    web app shows "Create account" only then."""
    return Signup(open=accounts.auth.signup_allowed())


@router.post(
    "/register",
    status_code=201,
    response_model=Registered,
    responses=error_responses(400, 403, 409, 429),
)
async def register(body: Credentials, accounts: AccountsDep, request: Request) -> Registered:
    """Create a user with a personal workspace. The first account of a deployment that has
    no admin is its admin (`isAdmin: true`; BUNKO_FIRST_USER_ADMIN=false turns this off).
    403 once an admin exists, unless BUNKO_SIGNUP=open: admins add people (POST /users)."""
    user = await in_turn(request, partial(accounts.auth.register, body.username, body.password))
    return Registered(message="User created successfully", user=UserPublic.of(user))


@router.post("/login", response_model=LoggedIn, responses=error_responses(400, 401, 429))
async def login(body: Credentials, accounts: AccountsDep, request: Request) -> LoggedIn:
    """An access token for `Authorization: Bearer`. Repeated failures lock the username
    for a while from the client's address, and after many more for everyone (429 with
    Retry-After)."""
    sign_in = partial(
        accounts.auth.login, body.username, body.password, address=client_address(request)
    )
    token, user = await in_turn(request, sign_in)
    return LoggedIn(
        access_token=token,
        expires_in=int(accounts.tokens.lifetime.total_seconds()),
        user=UserPublic.of(user),
    )


@router.post(
    "/change-password",
    response_model=PasswordChanged,
    responses=error_responses(400, 401, 403, 429),
)
async def change_password(
    body: PasswordChange,
    principal: CurrentPrincipal,
    accounts: AccountsDep,
    request: Request,
    response: Response,
) -> PasswordChanged:
    """Every token issued before the change stops working; use the one returned."""
    if principal.user_id is None:
        raise PermissionDeniedError("only a logged-in user can change a password")
    change = partial(
        accounts.auth.change_password,
        principal.user_id,
        body.currentPassword,
        body.newPassword,
        address=client_address(request),
    )
    token, user = await in_turn(request, change)
    if request.cookies.get(SESSION_COOKIE):  # this browser's session goes on, the others end
        lifetime = int(accounts.tokens.lifetime.total_seconds())
        set_session_cookies(
            response, request, accounts.tokens.issue_session(user), max_age=lifetime
        )
    return PasswordChanged(message="Password changed", access_token=token)


@router.get("/me", response_model=UserPublic, responses=error_responses(401, 403))
def me(principal: CurrentPrincipal, accounts: AccountsDep) -> UserPublic:
    """The signed-in user, as login returns it: what the web app keeps beside a token it got
    from a sign-in with the identity provider (`#oidc_token=…`), which names no user."""
    if principal.user_id is None:
        raise PermissionDeniedError("an API key names no user")
    return UserPublic.of(accounts.auth.user(principal.user_id))


class SignedOut(Message):
    # a person who signed in with the identity provider: where the browser goes next to end
    # that session too (absent otherwise)
    logoutUrl: str | None = None


@router.post(
    "/logout",
    response_model=SignedOut,
    response_model_exclude_none=True,
    responses=error_responses(401, 403),
)
def logout(
    principal: CurrentPrincipal,
    accounts: AccountsDep,
    services: ServicesDep,
    request: Request,
    response: Response,
) -> SignedOut:
    """Sign out: this token and every other token of the user stop working at once, the
    browser's session (other tabs') included. For a person who signed in with the identity
    provider, `logoutUrl` is its sign-out address (returning to the web app), where the web
    app sends the browser next."""
    if principal.user_id is None:
        raise PermissionDeniedError("only a logged-in user can sign out; revoke a key instead")
    accounts.auth.logout(principal.user_id)
    clear_session_cookies(response, request)
    web = accounts.sign_in.web if accounts.sign_in else None
    if web is None:
        return SignedOut(message="Signed out")
    # the web app's address exactly as configured: Cognito matches it against the client's
    # sign-out URLs (infra/constructs/sign_in.py gives it the same value)
    return_to = services.settings.web_app_url or str(request.base_url)
    return SignedOut(
        message="Signed out", logoutUrl=web.sign_out_url(principal.user_id, return_to=return_to)
    )
