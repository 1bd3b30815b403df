"""The MCP HTTP endpoints, mountable on any FastAPI app.

- `/mcp`: streamable HTTP, stateless with JSON responses (no session to keep, so it runs on
  Lambda as well as here); POST only: GET and DELETE are answered 405 (`PostOnly`);
- `/sse` + `/messages?session_id=...`: the legacy HTTP+SSE transport TelosDB clients use;
- `/.well-known/oauth-protected-resource[/mcp|/sse]`: RFC 9728 metadata;
- `/.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`: Bunko's
  own RFC 8414 metadata in front of the identity provider, named by the former where the
  provider lists no S256 (services/accounts/authorization_server.py). Both names, because a
  client finds an issuer with a path (`…/v1` under API Gateway's stage) by appending
  `/.well-known/openid-configuration` to it: the path-inserted RFC 8414 address
  (`/.well-known/oauth-authorization-server/v1`) lies outside the stage, where API Gateway
  routes nothing.
Each transport's SDK manager runs in the host app's lifespan.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from fastapi import APIRouter, FastAPI
from mcp.server import Server
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from bunko import __version__
from bunko.asgi.errors import install_error_handlers
from bunko.asgi.hardening import harden
from bunko.domain.auth import ALL_SCOPES
from bunko.errors import NotFoundError
from bunko.mcp.auth import WELL_KNOWN, McpAuthGuard
from bunko.mcp.registry import Profile
from bunko.mcp.tool_server import build_server

if TYPE_CHECKING:
    from bunko.bootstrap import Services
    from bunko.config import Settings
    from bunko.services.accounts import AuthorizationServerMetadata

MCP_PATH = "/mcp"
AUTHORIZATION_SERVER_PATHS = (
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
)
SSE_PATH = "/sse"
MESSAGES_PATH = "/messages"
INVALID_REQUEST = -32600  # JSON-RPC


def create_mcp_app(
    services: Services,
    *,
    routers: Sequence[APIRouter] = (),
    profile: Profile | None = None,
    output_schemas: bool | None = None,
) -> FastAPI:
    """The app `bunko serve` runs on the MCP port (3001, as TelosDB): /mcp, /sse, /messages,
    the OAuth metadata, and any `routers` (TelosDB's auxiliary HTTP API)."""
    app = FastAPI(title="Bunko MCP", version=__version__, docs_url=None, redoc_url=None)
    app.state.services = services
    install_error_handlers(app)
    mount_mcp(app, services, sse=True, profile=profile, output_schemas=output_schemas)
    for router in routers:
        app.include_router(router)
    harden(app, services.settings)  # the same body limits, host check and headers as REST
    return app


def mount_mcp(
    app: FastAPI,
    services: Services,
    *,
    sse: bool = False,
    profile: Profile | None = None,
    output_schemas: bool | None = None,
) -> None:
    """Add the MCP endpoints to `app` (streamable HTTP always, legacy SSE if `sse`)."""
    server = build_server(
        services, profile=profile, transport="http", output_schemas=output_schemas
    )
    security = transport_security(services.settings)
    manager = StreamableHTTPSessionManager(
        app=server, json_response=True, stateless=True, security_settings=security
    )
    accounts = services.accounts
    guarded = functools.partial(
        McpAuthGuard,
        identity=services.identity,
        access_tokens=accounts.sign_in.mcp if accounts and accounts.sign_in else None,
    )
    app.router.add_route(
        MCP_PATH,
        PostOnly(guarded(StreamableHTTPASGIApp(manager), resource_path=MCP_PATH)),
        methods=["GET", "POST", "DELETE"],
        include_in_schema=False,
    )
    paths = [MCP_PATH]
    if sse:
        transport = SseServerTransport(MESSAGES_PATH, security_settings=security)
        app.router.add_route(
            SSE_PATH,
            guarded(_SseEndpoint(transport, server), resource_path=SSE_PATH),
            methods=["GET"],
            include_in_schema=False,
        )
        app.router.add_route(
            MESSAGES_PATH,
            guarded(_PostEndpoint(transport), resource_path=SSE_PATH),
            methods=["POST"],
            include_in_schema=False,
        )
        paths.append(SSE_PATH)
    for suffix in ["", *paths]:
        app.router.add_route(
            WELL_KNOWN + suffix,
            _metadata_endpoint(suffix, services),
            methods=["GET"],
            include_in_schema=False,
        )
    for path in AUTHORIZATION_SERVER_PATHS:
        app.router.add_route(
            path,
            _authorization_server_endpoint(services),
            methods=["GET"],
            include_in_schema=False,
        )
    _run_in_lifespan(app, manager)


def transport_security(settings: Settings) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for the embedded server on loopback (the SDK's default).
    Not on AWS, where API Gateway's host reaches the app and the settings' host is moot."""
    if settings.backend != "local" or settings.host not in ("127.0.0.1", "localhost", "::1"):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class PostOnly:
    """/mcp takes POST alone; GET and DELETE get 405 at once, before auth and the SDK.

    Stateless, the server has nothing to say outside a POST's answer and no session to end,
    yet the SDK would answer a GET with a standalone event stream that its 15 s pings keep
    open: on AWS, the stream function held for its whole 15 minutes per connected client.
    The transport spec allows 405 for both (a client then just does not listen)."""

    MESSAGE = "Method Not Allowed: this server keeps no session and opens no event stream; POST"

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] == "POST":
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": INVALID_REQUEST, "message": self.MESSAGE},
            }
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"allow", b"POST"),
        ]
        await send({"type": "http.response.start", "status": 405, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class _SseEndpoint:
    """GET /sse: one MCP connection per event stream."""

    def __init__(self, transport: SseServerTransport, server: Server) -> None:
        self.transport = transport
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with self.transport.connect_sse(scope, receive, send) as (read, write):
                await self.server.run(read, write, self.server.create_initialization_options())
        except ValueError:
            pass  # refused by the host check; the transport has already answered


class _PostEndpoint:
    """POST /messages?session_id=...: a class, so Starlette routes it as a raw ASGI app."""

    def __init__(self, transport: SseServerTransport) -> None:
        self.transport = transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.transport.handle_post_message(scope, receive, send)


def _metadata_endpoint(suffix: str, services: Services) -> Any:
    async def metadata(request: Request) -> JSONResponse:
        settings = services.settings
        servers = settings.authorization_servers
        here = str(request.base_url).rstrip("/")
        stand_in = _stand_in(services)
        # the issuer lists no S256, which MCP clients require: Bunko's document instead
        if (
            stand_in is not None
            and not settings.mcp_authorization_servers
            and await anyio.to_thread.run_sync(stand_in.stands_in)
        ):
            servers = [here]
        # MCP clients ask the first server for these scopes: the identity provider's own
        # when it is that server or Bunko in front of it (a person gets what their account
        # may do, whatever the token's scope), else the scopes of Bunko's API keys
        scopes = (
            settings.oidc_mcp_scopes.split()
            if servers and servers[0] in (settings.oidc_issuer, here)
            else list(ALL_SCOPES)
        )
        body: dict[str, Any] = {
            "resource": here + suffix,
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "Bunko",
        }
        if servers:  # keys are issued by `bunko apikey create` unless an OAuth server fronts us
            body["authorization_servers"] = servers
        return JSONResponse(body, headers={"Access-Control-Allow-Origin": "*"})

    return metadata


def _stand_in(services: Services) -> AuthorizationServerMetadata | None:
    accounts = services.accounts
    sign_in = accounts.sign_in if accounts else None
    return sign_in.authorization_server if sign_in else None


def _authorization_server_endpoint(services: Services) -> Any:
    async def authorization_server(request: Request) -> JSONResponse:
        stand_in = _stand_in(services)
        if stand_in is None:
            raise NotFoundError("no identity provider is configured: MCP clients use API keys")
        # 503 (ServiceUnavailableError) while the issuer's discovery cannot be read
        body = await anyio.to_thread.run_sync(stand_in.document, str(request.base_url).rstrip("/"))
        return JSONResponse(body, headers={"Access-Control-Allow-Origin": "*"})

    return authorization_server


def _run_in_lifespan(app: FastAPI, manager: StreamableHTTPSessionManager) -> None:
    previous = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with manager.run(), previous(application) as state:
            yield state

    app.router.lifespan_context = lifespan
