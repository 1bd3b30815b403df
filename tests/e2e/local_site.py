"""A website on a local socket for the website source's tests and figures: pages held in a
dict the test edits between syncs, each answered with its ETag (or Last-Modified) and 304 to
a conditional request that matches; every request logged."""

from __future__ import annotations

import hashlib
from email.utils import formatdate

from tests.e2e.local_server import LocalServer


class LocalSite(LocalServer):
    def __init__(self) -> None:
        super().__init__()
        self.pages: dict[str, tuple[str, bytes]] = {}  # path → (content type, body)
        self.modified: dict[str, float] = {}  # path → a Last-Modified (instead of an ETag)
        self.status: dict[str, int] = {}  # path → a status it answers instead (a 503)

    def html(self, path: str, body: str, title: str = "") -> None:
        page = f"<html><head><title>{title}</title></head><body>{body}</body></html>"
        self.pages[path] = ("text/html; charset=utf-8", page.encode())

    def answer(self, path: str, headers) -> tuple[int, dict[str, str], bytes]:
        if path in self.status:
            return self.status[path], {"Content-Type": "text/plain"}, b"status set by the test"
        found = self.pages.get(path)
        if found is None:
            return 404, {"Content-Type": "text/plain"}, b"not found"
        kind, body = found
        out = {"Content-Type": kind}
        if path in self.modified:
            stamp = formatdate(self.modified[path], usegmt=True)
            out["Last-Modified"] = stamp
            if headers.get("If-Modified-Since") == stamp:
                return 304, out, b""
        else:
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            out["ETag"] = etag
            if headers.get("If-None-Match") == etag:
                return 304, out, b""
        return 200, out, body
