"""Shared by the MCP end-to-end tests: a real Bunko MCP app served by uvicorn on a free
loopback port in a thread, API keys in fresh workspaces, and official-SDK clients."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client, MCPError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from bunko.bootstrap import Services
from bunko.mcp.http import create_mcp_app
from tests.conftest import make_services
from tests.e2e.live_server import LOOPBACK_TLS, LiveServer


@dataclass
class Deployment:
    services: Services
    url: str

    def key(self, *scopes: str, workspace: str | None = None) -> str:
        """A new API key; in a fresh workspace unless one is given."""
        assert self.services.apikeys is not None
        _, secret = self.services.apikeys.create(
            workspace_id=workspace or str(uuid.uuid4()), scopes=scopes or ("kb:read",)
        )
        return secret

    def workspace_of(self, key: str) -> str:
        principal = self.services.identity.authenticate(key)
        return principal.workspace_id


@contextmanager
def deployed(data_dir: Path, **settings: Any) -> Iterator[Deployment]:
    """A real Bunko MCP app (the one `bunko serve` runs on the MCP port)."""
    services = make_services(data_dir, **{"embedder": "none", **settings})
    app = create_mcp_app(services)
    try:
        with LiveServer(app) as server:
            yield Deployment(services, server.url)
    finally:
        services.close()


def _headers(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


@asynccontextmanager
async def http_client(url: str, key: str | None, *, mode: str = "auto") -> AsyncIterator[Client]:
    """The official client over streamable HTTP."""
    async with (
        httpx2.AsyncClient(
            headers=_headers(key), timeout=httpx2.Timeout(60.0), verify=LOOPBACK_TLS
        ) as http,
        Client(streamable_http_client(url + "/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


@asynccontextmanager
async def sse_session(url: str, key: str | None, *, mode: str = "legacy") -> AsyncIterator[Client]:
    """The official client over the legacy HTTP+SSE transport."""
    async with Client(sse_client(url + "/sse", headers=_headers(key), timeout=60), mode=mode) as c:
        yield c


def mcp_error_in(exc: BaseException) -> MCPError | None:
    """The MCPError a client raised, even from inside the task groups' exception groups."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := mcp_error_in(inner)) is not None:
                return found
    return None


def payload(result: CallToolResult) -> Any:
    """What a TelosDB client reads: content[0].text parsed as JSON."""
    return json.loads(result.content[0].text)


def ok(result: CallToolResult) -> dict:
    assert not result.is_error, result.content[0].text
    data = payload(result)
    assert data == result.structured_content  # both carry the same result
    return data


STREAM = {"Accept": "text/event-stream"}


def assert_refused_at_once(url: str, method: str, key: str | None) -> None:
    """405 naming POST, a whole response: a held stream would answer 200 and its headers,
    then keep the body open (the SDK's first ping comes after 15 s)."""
    headers = dict(STREAM, **({"Authorization": f"Bearer {key}"} if key else {}))
    response = httpx.request(method, url + "/mcp", headers=headers, timeout=60)
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == "POST"
    assert response.json()["error"]["message"].startswith("Method Not Allowed")


async def refusal(client, name: str, arguments: dict) -> str:
    """The tool error a call ended in (the official client raises it)."""
    try:
        result = await client.call_tool(name, arguments)
    except BaseException as exc:
        found = mcp_error_in(exc)
        if found is None:
            raise
        return str(found)
    assert result.is_error, result.structured_content
    return result.content[0].text


def shared_library(rest):
    """A library with an owner, an editor and a viewer (Rest.shared_library), each with an
    API key in it."""
    shared = rest.shared_library("Handbook", "editor", "viewer")
    shared.owner.client.headers["X-Bunko-Library"] = shared.id
    people = {"owner": shared.owner, **shared.members}
    scopes = {"owner": ["kb:read", "kb:write"], "editor": ["kb:read", "kb:write"]}
    keys = {
        role: person.client.post(
            "/api-keys", json={"scopes": scopes.get(role, ["kb:read"])}
        ).json()["key"]
        for role, person in people.items()
    }
    return shared.owner, shared.id, keys
