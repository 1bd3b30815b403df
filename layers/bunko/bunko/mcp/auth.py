"""McpAuthGuard: bearer auth and per-tool scope checks in front of the MCP HTTP endpoints.

- a bearer is an API key, a Bunko access token, or (with BUNKO_OIDC_ISSUER) an OAuth access
  token from the identity provider for this resource (services/accounts/oidc_access.py);
- no or bad key: 401 with `WWW-Authenticate: Bearer ... resource_metadata=...` (RFC 6750,
  RFC 9728), as the MCP authorization spec asks;
- a valid key calling a tool whose scope it lacks: 403 with `error="insufficient_scope"`
  and the scope needed, before the tool runs (the tool checks again: defence in depth);
- otherwise the caller's Principal goes into the ASGI scope for the tools, and an SDK
  `AuthenticatedUser` too, so the SDK binds an SSE session to the key that opened it.
Bodies are JSON-RPC errors, which MCP clients surface to the caller.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bunko.domain.auth import Principal
from bunko.errors import AuthenticationError, ServiceUnavailableError
from bunko.mcp.tool_server import PRINCIPAL_SCOPE_KEY, TOOLS
from bunko.services.accounts import Identity, OidcAccessVerifier

UNAUTHORIZED_CODE = -32001
FORBIDDEN_CODE = -32003
PARSE_ERROR_CODE = -32700  # JSON-RPC: invalid JSON
UNAVAILABLE_CODE = -32000  # JSON-RPC: a server error (the identity provider out of reach)
WELL_KNOWN = "/.well-known/oauth-protected-resource"
# The SDK's own request limit; the guard reads a body before the SDK does, so it caps too.
MAX_BODY_BYTES = 4 * 1024 * 1024


def resource_metadata_url(request: Request, resource_path: str) -> str:
    return str(request.base_url).rstrip("/") + WELL_KNOWN + resource_path


class McpAuthGuard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        identity: Identity,
        resource_path: str,
        access_tokens: OidcAccessVerifier | None = None,
    ) -> None:
        self.app = app
        self.identity = identity
        self.resource_path = resource_path
        self.access_tokens = access_tokens  # the identity provider's, for this resource

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        token = _bearer(request.headers.get("authorization"))
        resource = str(request.base_url).rstrip("/") + self.resource_path
        try:
            principal = await anyio.to_thread.run_sync(self._authenticate, token, resource)
        except ServiceUnavailableError as exc:  # the identity provider's keys are out of reach
            await _respond(send, 503, UNAVAILABLE_CODE, str(exc))
            return
        except AuthenticationError as exc:
            challenge = {"realm": "bunko", "resource_metadata": self._metadata(request)}
            if token is not None:
                challenge |= {"error": "invalid_token", "error_description": str(exc)}
            await _respond(send, 401, UNAUTHORIZED_CODE, f"unauthorized: {exc}", challenge)
            return
        scope[PRINCIPAL_SCOPE_KEY] = principal
        scope["user"] = AuthenticatedUser(
            AccessToken(token="", client_id=_client_id(principal), scopes=sorted(principal.scopes))
        )
        scope["auth"] = AuthCredentials(sorted(principal.scopes))
        if scope["method"] == "POST":
            body = await _read_body(receive)
            if body is None:
                await _respond(send, 413, -32600, f"request body is over {MAX_BODY_BYTES} bytes")
                return
            try:
                refusal = _missing_scope(body, principal)
            except RecursionError:  # json.loads on deep nesting; not a ValueError
                await _respond(send, 400, PARSE_ERROR_CODE, "parse error: JSON nested too deeply")
                return
            if refusal is not None:
                tool, needed, request_id = refusal
                message = f"forbidden: {tool} needs the {needed} scope, which this key lacks"
                challenge = {
                    "error": "insufficient_scope",
                    "scope": needed,
                    "resource_metadata": self._metadata(request),
                    "error_description": message,
                }
                await _respond(send, 403, FORBIDDEN_CODE, message, challenge, request_id)
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    def _authenticate(self, token: str | None, resource: str) -> Principal:
        try:
            return self.identity.authenticate(token)
        except AuthenticationError:
            if token is None or self.access_tokens is None or not self.identity.auth_enabled:
                raise
            principal = self.access_tokens.verify(token, resource=resource)
            if principal is None:  # not the issuer's either: the identity's answer stands
                raise
            return principal

    def _metadata(self, request: Request) -> str:
        return resource_metadata_url(request, self.resource_path)


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def _client_id(principal: Principal) -> str:
    return principal.api_key_id or principal.user_id or principal.username or "local"


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Callable[[], Awaitable[Message]]:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _missing_scope(body: bytes, principal: Principal) -> tuple[str, str, Any] | None:
    """(tool, scope, request id) of the first tools/call the principal may not make."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return None  # the SDK answers malformed JSON itself
    for message in parsed if isinstance(parsed, list) else [parsed]:
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            continue
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        spec = TOOLS.get(name) if isinstance(name, str) else None
        if spec is not None and not principal.has(spec.scope):
            return spec.name, spec.scope, message.get("id")
    return None


async def _respond(
    send: Send,
    status: int,
    code: int,
    message: str,
    challenge: dict[str, str] | None = None,
    request_id: Any = None,
) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if challenge is not None:
        params = ", ".join(f'{k}="{_quote(v)}"' for k, v in challenge.items())
        headers.append((b"www-authenticate", f"Bearer {params}".encode("latin-1", "replace")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
