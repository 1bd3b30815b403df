"""The web app: static ES modules and CSS shipped in the package (bunko/web/static), served
at `/` with no network at run time. Pages route by the URL's hash, so the server needs no
fallback route; `config.json` tells the app where the API is ("" = this origin)."""

from __future__ import annotations

import hashlib
import mimetypes
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import Response
from starlette.routing import get_route_path
from starlette.types import Receive, Scope, Send

STATIC = Path(str(files("bunko.web") / "static"))
# Everything the package ships here is small (the whole app is a few hundred KB).
_TEXT = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}


class PackagedFiles:
    """The web app's files, read into memory once: a request is answered from bytes on the
    event loop, with no file system call and no worker thread. The first screen fetches ten
    of them at once; through StaticFiles each stat-ed and opened its file in the thread pool,
    which on a busy machine was most of the time to first paint (tests/bench/bench_web.py).
    Answers carry an ETag and `no-cache`: the module URLs are not versioned, so a browser
    asks again (304 while unchanged) and a new release is picked up at once (an edit to the
    files shows after the server restarts)."""

    def __init__(self, root: Path) -> None:
        self.files: dict[str, tuple[bytes, list[tuple[bytes, bytes]]]] = {}
        for path in sorted(root.rglob("*")):
            if not path.is_file():
                continue
            data = path.read_bytes()
            kind = _TEXT.get(path.suffix) or mimetypes.guess_type(path.name)[0]
            kind = kind or "application/octet-stream"
            if kind.startswith("text/"):
                kind += "; charset=utf-8"
            etag = f'"{hashlib.sha256(data).hexdigest()[:20]}"'
            headers = [
                (b"content-type", kind.encode()),
                (b"etag", etag.encode()),
                (b"cache-control", b"no-cache"),
            ]
            self.files["/" + path.relative_to(root).as_posix()] = (data, headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method")
        found = self.files.get(get_route_path(scope))
        if method not in ("GET", "HEAD"):
            status, body, headers = 405, b"Method Not Allowed", [(b"allow", b"GET, HEAD")]
        elif found is None:
            status, body, headers = 404, b"Not Found", []
        else:
            body, headers = found
            status = 200
            sent = dict(scope.get("headers", [])).get(b"if-none-match")
            etag = headers[1][1]
            if sent is not None and etag in [t.strip() for t in sent.split(b",")]:
                status, body = 304, b""
        await send({
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        })  # fmt: skip
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})


def mount_web(app: FastAPI) -> None:
    static = PackagedFiles(STATIC)
    index, _ = static.files["/index.html"]

    @app.get("/", include_in_schema=False)
    async def web_app() -> Response:
        # no-cache: a new release's index (and so its module URLs) is picked up at once
        return Response(index, media_type="text/html", headers={"Cache-Control": "no-cache"})

    @app.get("/config.json", include_in_schema=False)
    def web_config() -> dict:
        return {"apiBaseUrl": ""}

    app.mount("/static", static, name="web-static")
