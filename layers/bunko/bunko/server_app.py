"""The app `bunko serve` runs on its REST port and the Lambda functions serve: the REST door
with MCP over streamable HTTP mounted beside it, the one app AWS deploys (DESIGN).

It is composed here, above both doors, so that neither imports the other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bunko.http.app import create_app as create_rest_app
from bunko.http.routes.chat import KEEP_ALIVE_SECONDS
from bunko.mcp.http import mount_mcp

if TYPE_CHECKING:
    from fastapi import FastAPI

    from bunko.bootstrap import Services


def create_app(services: Services, *, keep_alive_seconds: float = KEEP_ALIVE_SECONDS) -> FastAPI:
    """The REST app on `services` with the MCP endpoints (/mcp and its OAuth metadata) on the
    same port; `keep_alive_seconds` as bunko.http.app's."""
    return create_rest_app(
        services,
        keep_alive_seconds=keep_alive_seconds,
        mounts=[lambda app: mount_mcp(app, services)],
    )
