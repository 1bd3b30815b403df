"""`bunko mcp`: the MCP server over stdio, for Claude Desktop, IDEs and other local agents.

The caller is the local user (every scope, default workspace) unless an API key is given,
in which case the key's workspace and scopes apply exactly as over HTTP, checked again at
every tool call (a key follows its maker's rights as they are then). stdout carries the
protocol only: the SDK points fd 1 at stderr while it serves, and services are built inside
that window, so model loading or a stray print can never corrupt the stream.
"""

from __future__ import annotations

import logging

import anyio
from mcp.server.stdio import stdio_server

from bunko.bootstrap import Services, build_services, requeue_unfinished
from bunko.config import Settings
from bunko.domain.auth import Principal
from bunko.errors import AuthenticationError
from bunko.mcp.registry import Profile
from bunko.mcp.tool_server import build_server
from bunko.services.accounts import LOCAL_PRINCIPAL

log = logging.getLogger(__name__)


def stdio_principal(services: Services, api_key: str | None) -> Principal:
    """The key's principal, or the local user; a bad key is refused before serving."""
    if not api_key:
        return LOCAL_PRINCIPAL
    for verifier in services.identity.verifiers:
        principal = verifier.verify(api_key)
        if principal is not None:
            return principal
    raise AuthenticationError("the API key given to `bunko mcp` is invalid or revoked")


def _key_principal(services: Services, api_key: str) -> Principal | None:
    try:
        return stdio_principal(services, api_key)
    except AuthenticationError:
        return None  # the tool answers "not authenticated"


async def serve_stdio(
    settings: Settings,
    *,
    api_key: str | None = None,
    profile: Profile | None = None,
    output_schemas: bool | None = None,
) -> None:
    async with stdio_server() as (read, write):
        services = await anyio.to_thread.run_sync(build_services, settings)
        try:
            principal = stdio_principal(services, api_key)  # a bad key: refused at once
            requeued = requeue_unfinished(services)
            if requeued:
                log.info("re-queued %d unfinished documents", requeued)
            server = build_server(
                services,
                profile=profile,
                transport="stdio",
                output_schemas=output_schemas,
                principal=(lambda: _key_principal(services, api_key)) if api_key else principal,
            )
            await server.run(read, write, server.create_initialization_options())
        finally:
            await anyio.to_thread.run_sync(services.close)


def run_stdio(
    settings: Settings,
    *,
    api_key: str | None = None,
    profile: Profile | None = None,
    output_schemas: bool | None = None,
) -> None:
    """Serve until stdin closes; raises AuthenticationError for a bad key."""
    try:
        anyio.run(
            lambda: serve_stdio(
                settings, api_key=api_key, profile=profile, output_schemas=output_schemas
            )
        )
    except BaseExceptionGroup as group:  # the transport's task group wraps what we raise
        refused = group.subgroup(AuthenticationError)
        if refused is None:
            raise
        raise _leaf(refused) from None


def _leaf(group: BaseExceptionGroup) -> BaseException:
    first = group.exceptions[0]
    return _leaf(first) if isinstance(first, BaseExceptionGroup) else first
