"""What every Bunko app gets on every port (REST on 3000, MCP/TelosDB on 3001, the Lambda
app): security headers, a trusted-host check, and body limits applied before reading.

- Trusted hosts stop DNS rebinding: a web page whose name resolves to 127.0.0.1 sends its
  own name as Host, so bound to loopback only loopback names are served; bound to a given
  address, that address and BUNKO_ALLOWED_HOSTS. Bound to a wildcard (0.0.0.0) or on AWS
  (API Gateway routes by host already) only BUNKO_ALLOWED_HOSTS, when set, is checked.
- Headers: no MIME sniffing, no framing, and a Content-Security-Policy for a same-origin
  web app without a CDN (scripts, styles, images and fetches from this origin only).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bunko.asgi.errors import error_response
from bunko.asgi.limits import BodySizeLimit

if TYPE_CHECKING:
    from fastapi import FastAPI

    from bunko.config import Settings

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - names, not a bind

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "media-src 'self' blob:; object-src 'none'; frame-ancestors 'none'; base-uri 'self'; "
    "form-action 'self'"
)
# /docs and /redoc run an inline script, and load Swagger UI / ReDoc from this server
# (http/api_docs.py) or, without the package that ships them, from FastAPI's CDN: those two
# pages (nothing else) may.
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; img-src 'self' data: "
    "https://fastapi.tiangolo.com https://cdn.redoc.ly; worker-src blob:; "
    "frame-ancestors 'none'; object-src 'none'"
)
DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})
HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def harden(app: FastAPI, settings: Settings) -> None:
    """Add the body limits, the trusted-host check and the security headers to `app`
    (outermost last, so a refused host or body still carries the headers)."""
    app.add_middleware(
        BodySizeLimit,
        max_file_bytes=settings.max_file_bytes,
        idle_timeout=settings.body_timeout_seconds,
        deadline=settings.body_deadline_seconds,
    )
    hosts = trusted_hosts(settings)
    if hosts is None:
        log.warning("any Host header is accepted: set BUNKO_ALLOWED_HOSTS to the server's names")
    else:
        app.add_middleware(TrustedHosts, hosts=hosts)
    app.add_middleware(SecurityHeaders)


def trusted_hosts(settings: Settings) -> frozenset[str] | None:
    """The host names served, or None for any."""
    extra = frozenset(h.lower().rstrip(".") for h in settings.allowed_hosts)
    if settings.backend != "local" or settings.host in WILDCARD_BINDS:
        return extra or None
    if settings.host in LOOPBACK_NAMES:
        return LOOPBACK_NAMES | extra
    return frozenset({settings.host.lower().strip("[]")}) | extra


def host_name(header: str) -> str:
    """The name of a Host header, without port or brackets: `[::1]:3000` → `::1`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    name, _, port = header.rpartition(":")
    return (name if name and port.isdigit() else header).rstrip(".")


class TrustedHosts:
    def __init__(self, app: ASGIApp, *, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            header = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if host_name(header) not in self.hosts:
                # 421, as the MCP SDK answers a rebound /mcp
                await error_response(421, "invalid Host header", scope=scope)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = (DOCS_CSP if scope.get("path") in DOCS_PATHS else CSP).encode()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(n, v) for n, v in HEADERS if n not in present]
                if b"content-security-policy" not in present:
                    extra.append((b"content-security-policy", csp))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
