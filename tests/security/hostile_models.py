"""A hostile OpenAI-compatible model endpoint on loopback, for the outbound-call attacks
(issue 33 point 2). One server answers `/embeddings`, `/chat/completions` and `/rerank` the
way its `attack` says; it counts the requests that reach it and notices when a client
hangs up before the answer is over. Big answers are written piece by piece, so the server
itself holds little memory while the client under test receives them."""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler

from tests.loopback_http import LoopbackHttp

WIDE = 200_000  # the dimension of the attack's vectors
HUGE_BYTES = 200 * 1024 * 1024  # a 200 MB answer
FLOOD = 1_000_000  # rerank results
FOREVER = 20_000  # chat deltas of an answer that does not stop (a bound for the old code)
BLOB = 50 * 1024 * 1024  # one chat delta of 50 MB
SILENT = 500  # keep-alive comments, 20 ms apart: ten seconds without a word
_MB = b" " * (1024 * 1024)


def _vectors(count: int, dimension: int, *, first: str = "0.125") -> Iterator[bytes]:
    row = ",".join([first] + ["0.125"] * (dimension - 1)).encode()
    yield b'{"object": "list", "model": "hostile", "data": ['
    for i in range(count):
        head = b"," if i else b""
        yield head + b'{"object": "embedding", "index": %d, "embedding": [' % i + row + b"]}"
    yield b"]}"


def _gzipped(pieces: Iterable[bytes]) -> Iterator[bytes]:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for piece in pieces:
        if packed := packer.compress(piece):
            yield packed
    yield packer.flush()


def _chunk(content: str) -> bytes:
    delta = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}
    return b"data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", **delta}).encode()


class HostileModels(LoopbackHttp):
    """`attack`: honest, wide, extra, ragged, nan, huge, gzip (honest, compressed), bomb
    (huge, compressed: 200 MB in about 200 KB) (embeddings); forever, silent, blob (chat);
    out_of_range, flood (rerank); redirect (every path, to `redirect_to`)."""

    def __init__(self, attack: str = "honest", *, dimension: int = 8, redirect_to: str = ""):
        self.attack = attack
        self.dimension = dimension
        self.redirect_to = redirect_to
        self.requests = 0
        self.hung_up = threading.Event()  # a client closed the connection mid-answer
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server.requests += 1
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if server.attack == "redirect":
                    self.send_response(307)
                    self.send_header("Location", server.redirect_to + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                kind = self.path.rsplit("/", 1)[-1]
                answer = getattr(server, f"_{kind}")(body)
                self.send_response(200)
                if server.attack in ("gzip", "bomb"):
                    self.send_header("Content-Encoding", "gzip")
                    answer = _gzipped(answer)
                stream = kind == "completions"
                self.send_header(
                    "Content-Type", "text/event-stream" if stream else "application/json"
                )
                self.end_headers()
                try:
                    for piece in answer:
                        self.wfile.write(piece)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    server.hung_up.set()

            def log_message(self, *args) -> None:
                pass

        super().__init__(Handler)
        self.base = self.url + "/v1"  # the OpenAI base URL, as a model config's baseUrl

    def __enter__(self) -> HostileModels:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _embeddings(self, body: dict) -> Iterable[bytes]:
        count = len(body["input"]) if isinstance(body["input"], list) else 1
        if self.attack == "wide":
            return _vectors(count, WIDE)
        if self.attack == "extra":
            return _vectors(count + 2, self.dimension)
        if self.attack == "nan":
            return _vectors(count, self.dimension, first="NaN")
        if self.attack == "ragged":
            rows = list(_vectors(count, self.dimension))
            rows[-2] = rows[-2].replace(b"0.125,", b"", 1)  # the last vector one short
            return rows
        if self.attack in ("huge", "bomb"):  # an honest answer padded to 200 MB (valid JSON)
            *rows, end = _vectors(count, self.dimension)
            return [*rows, *([_MB] * (HUGE_BYTES // len(_MB))), end]
        return _vectors(count, self.dimension)

    def _completions(self, body: dict) -> Iterator[bytes]:
        if self.attack == "forever":
            for _ in range(FOREVER):
                yield _chunk("tok ") + b"\n\n"
        elif self.attack == "silent":
            for _ in range(SILENT):
                yield b": keep-alive\n\n"
                time.sleep(0.02)
        elif self.attack == "blob":
            head, _, tail = _chunk("@").partition(b"@")
            yield head
            for _ in range(BLOB // len(_MB)):
                yield b"x" * len(_MB)
            yield tail + b"\n\n"
        else:
            yield _chunk("fine") + b"\n\n"
        yield b"data: [DONE]\n\n"

    def _rerank(self, body: dict) -> Iterator[bytes]:
        n = len(body["documents"])
        if self.attack == "out_of_range":
            results = [
                {"index": n + 4, "relevance_score": 0.9},
                {"index": 0, "relevance_score": 0.1},
            ]
            yield json.dumps({"results": results}).encode()
        elif self.attack == "flood":
            yield b'{"results": ['
            for start in range(0, FLOOD, 10_000):
                rows = (
                    b'{"index": %d, "relevance_score": 0.5}' % (i % n)
                    for i in range(start, start + 10_000)
                )
                yield (b"," if start else b"") + b",".join(rows)
            yield b"]}"
        else:
            results = [{"index": i, "relevance_score": 1.0 / (i + 1)} for i in range(n)]
            yield json.dumps({"results": results}).encode()


def choose(user, base_url: str):
    """Save an embedding model config at `base_url` and choose it for the user's workspace
    (the probe runs here); `user` is a tests/e2e/rest_harness.py user. Returns the answer."""
    body = {"name": "hostile", "provider": "local", "modelId": "m", "type": "embedding"}
    created = user.client.post("/model-configs", json={**body, "baseUrl": base_url})
    assert created.status_code == 201, created.text
    return user.client.put("/embedding-model", json={"modelConfigId": created.json()["id"]})
