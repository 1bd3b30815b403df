"""An OpenAI-compatible chat endpoint on loopback whose answers stay open until the test lets
them finish: each request streams its first piece, then a token every TICK_SECONDS until one
`release()` lets it end. A test holds chats in progress for as long as it needs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WAIT_SECONDS = 60  # a forgotten release never hangs the suite
TICK_SECONDS = 0.1  # a token while it waits: a client that leaves is noticed at the next one


class GatedLlm:
    def __init__(self) -> None:
        self.permits = threading.Semaphore(0)
        self.started = 0  # requests that have sent their first piece
        self._lock = threading.Lock()
        gate = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    self._piece(body, "The keeper ", None)
                    with gate._lock:
                        gate.started += 1
                    deadline = time.monotonic() + WAIT_SECONDS
                    while not gate.permits.acquire(timeout=TICK_SECONDS):
                        if time.monotonic() > deadline:
                            break
                        self._piece(body, ".", None)  # still generating, as a model does
                    self._piece(body, "trims the lamp [1].", "stop")
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except OSError:
                    pass  # the server hung up: the client left

            def _piece(self, body: dict, text: str, finish: str | None) -> None:
                chunk = {
                    "id": "chatcmpl-gated", "object": "chat.completion.chunk", "created": 0,
                    "model": body.get("model", "gated"),
                    "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
                }  # fmt: skip
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def release(self, n: int = 1) -> None:
        for _ in range(n):
            self.permits.release()


@contextmanager
def gated_llm() -> Iterator[GatedLlm]:
    llm = GatedLlm()
    thread = threading.Thread(target=llm.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield llm
    finally:
        llm.release(1000)
        llm.server.shutdown()
        llm.server.server_close()
