"""A tiny OpenAI-compatible chat server on loopback that streams a fixed answer and records
the `messages` and the `Authorization` header of every request: a test sees exactly what a
chat model was shown, and with which key."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = ["The keeper ", "trims the lamp ", "[1]."]


class RecordingLlm:
    def __init__(self, answer: list[str] = ANSWER) -> None:
        self.requests: list[list[dict]] = []
        self.answer = answer
        self.authorizations: list[str | None] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                recorder.requests.append(body.get("messages", []))
                recorder.authorizations.append(self.headers.get("Authorization"))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                pieces = recorder.answer
                for n, piece in enumerate(pieces):
                    chunk = {
                        "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
                        "model": body.get("model", "test"),
                        "choices": [{"index": 0, "delta": {"content": piece},
                                     "finish_reason": "stop" if n == len(pieces) - 1 else None}],
                    }  # fmt: skip
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@contextmanager
def recording_llm(answer: list[str] = ANSWER) -> Iterator[RecordingLlm]:
    llm = RecordingLlm(answer)
    thread = threading.Thread(target=llm.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield llm
    finally:
        llm.server.shutdown()
        llm.server.server_close()
