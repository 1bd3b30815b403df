"""Both ports of `bunko serve` over real sockets: the REST app (3000) and the MCP app with
TelosDB's HTTP API (3001), sharing one set of services, plus raw-socket requests for
attacks an HTTP client library would not send (lying Content-Length, stalled bodies)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bunko.bootstrap import Services
from bunko.http.routes import telosdb
from bunko.mcp.http import create_mcp_app
from bunko.server_app import create_app
from tests.conftest import make_services
from tests.e2e.live_server import LiveServer
from tests.e2e.rest_harness import ADMIN, JWT_SECRET


@dataclass
class Ports:
    services: Services
    rest: str
    mcp: str

    def urls(self) -> dict[str, str]:
        return {"rest": self.rest, "mcp": self.mcp}


@contextmanager
def both_ports(data_dir: Path, **settings: Any) -> Iterator[Ports]:
    values = {
        "embedder": "none", "jwt_secret": JWT_SECRET,
        "admin_username": ADMIN[0], "admin_password": ADMIN[1], **settings,
    }  # fmt: skip
    services = make_services(data_dir, **values)
    try:
        with ExitStack() as stack:
            rest = stack.enter_context(LiveServer(create_app(services)))
            mcp = stack.enter_context(
                LiveServer(create_mcp_app(services, routers=[telosdb.router]))
            )
            yield Ports(services, rest.url, mcp.url)
    finally:
        services.close()


def raw_exchange(url: str, head: bytes, body: bytes = b"", *, wait: float = 20.0) -> bytes:
    """Send `head` (+ `body`) on a fresh connection and return what comes back before the
    server closes or `wait` seconds pass without a byte."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        sock.sendall(head + body)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
                if b"\r\n\r\n" in received and _complete(received):
                    break
        except TimeoutError:
            pass
    return received


def _complete(response: bytes) -> bool:
    head, _, body = response.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/") else 0
