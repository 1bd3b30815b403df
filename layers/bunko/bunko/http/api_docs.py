"""/docs and /redoc from assets shipped in a package (fastapi-offline's Swagger UI and ReDoc),
as the web app serves its own: the API reference shows with no network. Without that package
FastAPI's own pages stay (they load their scripts from a CDN)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"


def docs_assets() -> Path | None:
    """The folder holding swagger-ui-bundle.js, swagger-ui.css and redoc.standalone.js."""
    spec = importlib.util.find_spec("fastapi_offline")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "static"
    return folder if (folder / "swagger-ui-bundle.js").is_file() else None


def mount_docs(app: FastAPI, assets: Path) -> None:
    """/docs, its OAuth redirect and /redoc, their scripts and styles from `assets` (the app
    was made with docs_url=None and redoc_url=None)."""
    app.mount(ASSETS, StaticFiles(directory=assets), name="docs-assets")

    def root(request: Request) -> str:
        return request.scope.get("root_path", "")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=root(request) + (app.openapi_url or "/openapi.json"),
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=app.swagger_ui_oauth2_redirect_url,
            swagger_js_url=f"{root(request)}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root(request)}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root(request)}/static/icon.svg",
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(
            openapi_url=root(request) + (app.openapi_url or "/openapi.json"),
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root(request)}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root(request)}/static/icon.svg",
            with_google_fonts=False,
        )
