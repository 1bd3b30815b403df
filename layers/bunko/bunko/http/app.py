"""The REST app factory. It only assembles: routers, error handlers, services. The app with
MCP mounted beside REST (what `bunko serve` and the Lambda functions run) is composed above
both doors, in bunko.server_app."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fastapi import FastAPI
from fastapi.routing import iter_route_contexts

from bunko import __version__
from bunko.asgi.audit import AuditRequests
from bunko.asgi.errors import install_error_handlers
from bunko.asgi.hardening import harden
from bunko.bootstrap import Services
from bunko.http.api_docs import docs_assets, mount_docs
from bunko.http.errors import document_errors
from bunko.http.routes import conversations, health, moving, originals, sources, uploads
from bunko.http.routes.chat import KEEP_ALIVE_SECONDS
from bunko.http.routes.rest import rest_routers
from bunko.http.web import mount_web


def create_app(
    services: Services,
    *,
    keep_alive_seconds: float = KEEP_ALIVE_SECONDS,
    mounts: Sequence[Callable[[FastAPI], None]] = (),
) -> FastAPI:
    """The REST app on `services`; its chat streams send a keep-alive comment every
    `keep_alive_seconds` while a slow model thinks. Each of `mounts` adds another door's
    endpoints to the app (bunko.server_app: MCP's), before the web app and the hardening."""
    assets = docs_assets()  # the API reference's own scripts, when their package is there
    local_docs = {"docs_url": None, "redoc_url": None} if assets else {}
    app = FastAPI(
        title="Bunko",
        version=__version__,
        description="Knowledge base for people and AI agents.",
        **local_docs,
    )
    if assets:
        mount_docs(app, assets)
    app.state.services = services
    app.state.keep_alive_seconds = keep_alive_seconds
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
    if services.sources is not None:
        app.include_router(sources.router)
    if services.moves is not None and not services.moves.archives.served_here:
        app.include_router(moving.signed_router)  # archives PUT to the bucket (AWS)
    for mount in mounts:
        mount(app)
    mount_web(app)
    if services.audit is not None:
        app.add_middleware(AuditRequests, trail=services.audit, routes=lambda: route_shapes(app))
    harden(app, services.settings)  # body limits, trusted hosts, security headers
    return app


def route_shapes(app: FastAPI) -> list[tuple[str, set[str] | None]]:
    """(path template, methods) of every route the app serves, in the order it tries them."""
    return [(r.path_format or "", r.methods) for r in iter_route_contexts(app.routes)]
