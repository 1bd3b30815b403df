"""A website on a local socket for the website source's tests and figures: pages held in a
dict the test edits between syncs, each answered with its ETag (or Last-Modified) and 304 to
a conditional request that matches; every request logged."""

from __future__ import annotations

import hashlib
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalSite:
    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, bytes]] = {}  # path → (content type, body)
        self.modified: dict[str, float] = {}  # path → a Last-Modified (instead of an ETag)
        self.log: list[tuple[str, int]] = []  # (path, status)
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, headers, body = site.answer(self.path, self.headers)
                with site._lock:
                    site.log.append((self.path, status))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def html(self, path: str, body: str, title: str = "") -> None:
        page = f"<html><head><title>{title}</title></head><body>{body}</body></html>"
        self.pages[path] = ("text/html; charset=utf-8", page.encode())

    def answer(self, path: str, headers) -> tuple[int, dict[str, str], bytes]:
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

    def requests(self) -> list[tuple[str, int]]:
        with self._lock:
            done, self.log = self.log, []
        return done

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
