"""The HTTP server every fake service of the tests stands on: a free port on 127.0.0.1 served
by a daemon thread, each request answered by the subclass's `answer` (GET) or `answer_post`
(POST, its form already read) and logged as `entry` says; `requests()` hands the log over."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

Answer = tuple[int, Mapping[str, str], bytes]  # (status, headers, body)


class LocalServer:
    def __init__(self) -> None:
        self.log: list[Any] = []
        self._lock = threading.RLock()  # reentrant: a fake's answer may hold it too
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._reply(server.answer(self.path, self.headers))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                self._reply(server.answer_post(self.path, form))

            def _reply(self, answer: Answer) -> None:
                status, headers, body = answer
                with server._lock:
                    server.log.append(server.entry(self.path, status, self.headers))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = self.origin
        # Polled every 50 ms, so that close() waits no half second (serve_forever's default)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def answer(self, path: str, headers: Mapping[str, str]) -> Answer:
        return 404, {"Content-Type": "text/plain"}, b"not found"

    def answer_post(self, path: str, form: dict[str, str]) -> Answer:
        return 501, {"Content-Type": "text/plain"}, b"Unsupported method ('POST')"

    def entry(self, path: str, status: int, headers: Mapping[str, str]) -> Any:
        """What the log keeps of one request."""
        return path, status

    def requests(self) -> list[Any]:
        """The requests logged since the last call."""
        with self._lock:
            done, self.log = self.log, []
        return done

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
