"""What the app needs in front of it behind API Gateway (REST), for both functions.

- The base path back in the URL: API Gateway strips the stage (`/v1`) or a custom domain's
  base path from the path Mangum and the Lambda Web Adapter hand on, so URLs the app builds
  (`resource_metadata`, the protected-resource `resource`, `/docs`'s OpenAPI link) would miss
  it. The prefix is what `requestContext.path` has in front of the path the app sees, so a
  custom domain's base path mapping is honoured too. It becomes the ASGI `root_path`.
- The payload limit of a Lambda invocation: 6 MB for the whole event, and binary bodies
  arrive base64-encoded (4/3 larger), so a body over API_BODY_LIMIT is answered with the
  app's own 413 that points at POST /uploads/presign, before the invoke limit is reached.
- CORS for a strict allow-list of origins (the web app's), preflights included.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

from bunko.asgi.errors import error_response

# Lambda's synchronous invoke payload is 6,291,456 bytes; 4 MiB base64-encodes to 5.6 MB,
# which leaves room for headers and the rest of the event.
API_BODY_LIMIT = 4 * 1024 * 1024
# The Lambda Web Adapter passes API Gateway's request context on in this header.
CONTEXT_HEADER = b"x-amzn-request-context"


def request_context(scope: Scope) -> dict:
    event = scope.get("aws.event")  # Mangum
    if isinstance(event, dict):
        return event.get("requestContext") or {}
    raw = dict(scope.get("headers") or []).get(CONTEXT_HEADER)  # Lambda Web Adapter
    try:
        context = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return context if isinstance(context, dict) else {}


def base_path(scope: Scope) -> str:
    """The part of the public path API Gateway removed: `/v1`, or a custom domain's base path."""
    public = request_context(scope).get("path")
    seen = scope.get("path") or ""
    if not isinstance(public, str) or not seen or not public.endswith(seen):
        return ""
    prefix = public[: len(public) - len(seen)].rstrip("/")
    return prefix if prefix.startswith("/") else ""


class ApiGatewayPaths:
    """Restore the base path as the ASGI root_path (uvicorn's --root-path semantics)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            prefix = base_path(scope)
            if prefix:
                raw = scope.get("raw_path") or scope["path"].encode()
                scope = dict(
                    scope,
                    root_path=prefix,
                    path=prefix + scope["path"],
                    raw_path=prefix.encode() + raw,
                )
        await self.app(scope, receive, send)


class ApiPayloadLimit:
    """The app's own 413 for a body too large to pass through API Gateway and Lambda."""

    def __init__(self, app: ASGIApp, *, limit: int = API_BODY_LIMIT) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            declared = dict(scope.get("headers") or []).get(b"content-length")
            if (
                declared is not None
                and declared.isascii()
                and declared.isdigit()
                and int(declared) > self.limit
            ):
                message = (
                    f"request body is {int(declared)} bytes; the API accepts at most "
                    f"{self.limit} bytes: upload larger files with POST /uploads/presign"
                )
                await error_response(413, message, scope=scope)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def behind_api_gateway(app: ASGIApp, *, cors_origins: Sequence[str]) -> ASGIApp:
    """The app as the functions serve it: paths, payload limit, CORS (outermost first)."""
    wrapped: ASGIApp = ApiPayloadLimit(app)
    if cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        wrapped = CORSMiddleware(
            wrapped,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Mcp-Session-Id",
                # what browser MCP clients send after initialize, and on a stream's resumption
                "MCP-Protocol-Version",
                "Last-Event-ID",
                "X-Api-Key",
                "X-Bunko-Library",
            ],
            # Retry-After: clients wait out a 429; X-Total-Count: the library's paging.
            expose_headers=[
                "WWW-Authenticate",
                "Mcp-Session-Id",
                "Retry-After",
                "X-Total-Count",
                "X-Bunko-Existing",
            ],
            allow_credentials=False,  # bearer tokens, never cookies
            max_age=3600,
        )
    return ApiGatewayPaths(wrapped)
