"""A forward HTTP proxy on a local socket, as an operator's network has one: it takes a
request for an absolute URL (`GET http://host/path`), makes it to that host, and answers
what the host answered; `CONNECT host:port` (an https URL's way through) opens a tunnel
and relays its bytes both ways, unread. Every request is logged (method, the URL or
host:port asked, its Proxy-Authorization), so a test sees what went through it."""

from __future__ import annotations

import http.client
import select
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from tests.loopback_http import LoopbackHttp

_NAMES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
_HOP = {"connection", "keep-alive", "proxy-authorization", "proxy-connection", "te",
        "trailer", "transfer-encoding", "upgrade", "content-length"}  # fmt: skip


class ForwardProxy(LoopbackHttp):
    def __init__(self, names: dict[str, str] | None = None) -> None:
        """`names`: host names only this proxy resolves (its own DNS), to addresses."""
        self.log: list[tuple[str, str, str | None]] = []
        known = names or {}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def do_CONNECT(self) -> None:
                proxy.log.append(("CONNECT", self.path, self.headers.get("Proxy-Authorization")))
                host, _, port = self.path.rpartition(":")
                upstream = socket.create_connection((known.get(host, host), int(port)), timeout=60)
                self.send_response(200, "Connection Established")
                self.end_headers()
                ends = [self.connection, upstream]
                try:
                    while True:
                        ready, _, _ = select.select(ends, [], [], 60)
                        if not ready:
                            return
                        for end in ready:
                            data = end.recv(65536)
                            if not data:
                                return
                            (upstream if end is self.connection else self.connection).sendall(data)
                finally:
                    upstream.close()
                    self.close_connection = True

            def _forward(self) -> None:
                proxy.log.append((self.command, self.path, self.headers.get("Proxy-Authorization")))
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                target = urlsplit(self.path)
                host = known.get(target.hostname or "", target.hostname)
                upstream = http.client.HTTPConnection(host, target.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                path = target.path + (f"?{target.query}" if target.query else "")
                upstream.request(self.command, path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                content = answer.read()
                upstream.close()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in _HOP:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, *args) -> None:
                pass

        super().__init__(Handler)


@contextmanager
def forward_proxy(monkeypatch, names: dict[str, str] | None = None) -> Iterator[ForwardProxy]:
    """A ForwardProxy, with no proxy named by the environment yet (the test names it)."""
    for name in _NAMES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    proxy = ForwardProxy(names)
    try:
        yield proxy
    finally:
        proxy.close()
