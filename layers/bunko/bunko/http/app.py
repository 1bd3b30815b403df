"""The FastAPI app factory. It only assembles: routers, error handlers, services."""

from __future__ import annotations

from fastapi import FastAPI

from bunko import __version__
from bunko.bootstrap import Services, build_services
from bunko.http.errors import install_error_handlers
from bunko.http.routes import health


def create_app(services: Services | None = None) -> FastAPI:
    services = services or build_services()
    app = FastAPI(title="Bunko", version=__version__, description="Knowledge base for people and AI agents.")
    app.state.services = services
    install_error_handlers(app)
    app.include_router(health.router)
    return app
