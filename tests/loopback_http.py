"""A test's HTTP server on a free loopback port, answered from a daemon thread: the tail
every stand-in server (a proxy, a model endpoint, a hostile peer) shares."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackHttp:
    """Serves `handler` at `url` (http://127.0.0.1:port) until `close()`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # Polled every 50 ms, so that close() waits no half second (serve_forever's default)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
