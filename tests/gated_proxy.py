"""A real HTTP proxy in front of an OpenAI-compatible embeddings server that holds requests
until its gate opens (the dimension probe always passes), and records each request's inputs:
a test can keep a model rebuild in progress for as long as it needs, then let it finish."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

import httpx

from tests.loopback_http import LoopbackHttp

PROBE = "dimension probe"  # OpenAIEmbedder's probe text


class GatedProxy(LoopbackHttp):
    def __init__(self, target: str, *, open_: bool = True, allow: int = 0) -> None:
        """`allow`: how many requests pass while the gate is closed (then they wait)."""
        self.gate = threading.Event()
        if open_:
            self.gate.set()
        self.allow = allow
        self.inputs: list[list[str]] = []  # each request's texts, in arrival order
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                texts = json.loads(body or b"{}").get("input") or []
                with proxy._lock:
                    passes = texts == [PROBE] or proxy.allow > 0
                    if proxy.allow > 0 and texts != [PROBE]:
                        proxy.allow -= 1
                if not passes:
                    proxy.gate.wait(300)
                with proxy._lock:
                    proxy.inputs.append(texts)
                answer = httpx.post(
                    f"{target}{self.path}",
                    content=body,
                    headers={"content-type": "application/json"},
                    timeout=120,
                )
                try:
                    self.send_response(answer.status_code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(answer.content)))
                    self.end_headers()
                    self.wfile.write(answer.content)
                except OSError:
                    pass  # the client was killed while it waited

            def log_message(self, *args) -> None:
                pass

        super().__init__(Handler)

    def queried(self, text: str) -> bool:
        """Whether `text` alone was sent (a query: documents go in batches or with others)."""
        with self._lock:
            return any(t == [text] for t in self.inputs)

    def close(self) -> None:
        self.gate.set()
        super().close()
