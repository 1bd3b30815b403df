"""The web app: static ES modules and CSS shipped in the package (bunko/web/static), served
at `/` with no network at run time. Pages route by the URL's hash, so the server needs no
fallback route; `config.json` tells the app where the API is ("" = this origin)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(str(files("bunko.web") / "static"))


def mount_web(app: FastAPI) -> None:
    index = STATIC / "index.html"

    @app.get("/", include_in_schema=False)
    def web_app() -> FileResponse:
        # no-cache: a new release's index (and so its module URLs) is picked up at once
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    @app.get("/config.json", include_in_schema=False)
    def web_config() -> dict:
        return {"apiBaseUrl": ""}

    app.mount("/static", StaticFiles(directory=STATIC), name="web-static")
