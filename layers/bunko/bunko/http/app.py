"""The FastAPI app factory. It only assembles: routers, error handlers, services."""

from __future__ import annotations

from fastapi import FastAPI

from bunko import __version__
from bunko.bootstrap import Services
from bunko.http.errors import document_errors, install_error_handlers
from bunko.http.hardening import harden
from bunko.http.routes import conversations, health, originals, uploads
from bunko.http.routes.rest import rest_routers
from bunko.http.web import mount_web
from bunko.mcp.http import mount_mcp


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Bunko", version=__version__, description="Knowledge base for people and AI agents."
    )
    app.state.services = services
    install_error_handlers(app)
    document_errors(app)
    app.include_router(health.router)
    for router in rest_routers():
        app.include_router(router)
    app.include_router(conversations.router)
    if services.originals is not None:
        app.include_router(originals.router)
    if services.upload_signer is not None:
        app.include_router(uploads.router)
    # MCP over streamable HTTP on this port too: the one app AWS deploys (DESIGN).
    mount_mcp(app, services)
    mount_web(app)
    harden(app, services.settings)  # body limits, trusted hosts, security headers
    return app
