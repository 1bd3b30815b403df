"""Several processes, one data folder (issue 13, point 4): a running `bunko serve` sees what
a separate `bunko ingest` process writes without a restart (its index notices another
process's commits), and a second `bunko serve` on the same folder refuses to start, naming
the first; the lock goes with the process, even on SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.cli_harness import BUNKO, run
from tests.e2e.mcp_harness import http_client, payload
from tests.waiting import free_port

pytestmark = pytest.mark.slow  # real `bunko serve` and `bunko ingest` processes


def _env(data: Path) -> dict[str, str]:
    return {**os.environ, "BUNKO_DATA_DIR": str(data), "BUNKO_EMBEDDER": "none",
            "BUNKO_AUTH": "off"}  # fmt: skip


def _serve(data: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [*BUNKO, "serve", "--port", str(port), "--mcp-port", str(free_port()), "--no-watch"],
        env=_env(data),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _wait_up(server: subprocess.Popen, port: int) -> str:
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
            return f"http://127.0.0.1:{port}"
        except httpx.TransportError:
            assert server.poll() is None, server.stdout.read().decode()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)


async def _search(url: str, query: str) -> list[str]:
    async with http_client(url, None) as client:
        result = await client.call_tool("search_text", {"content": query, "min_score": 0})
        return [item["path"] for item in payload(result)["items"]]


def test_a_server_sees_another_process_writes_and_a_second_server_refuses(tmp_path):
    data = tmp_path / "data"
    port = free_port()
    server = _serve(data, port)
    try:
        url = _wait_up(server, port)
        notes = tmp_path / "notes"
        notes.mkdir()
        (notes / "first.txt").write_text("The wombat digs a burrow.", encoding="utf-8")
        run(["ingest", str(notes / "first.txt")], data, env={"BUNKO_AUTH": "off"})
        assert len(asyncio.run(_search(url, "wombat"))) == 1  # the server loads its index
        (notes / "second.txt").write_text("The quokka smiles at tourists.", encoding="utf-8")
        run(["ingest", str(notes / "second.txt")], data, env={"BUNKO_AUTH": "off"})
        # Already loaded engines are refreshed from what the other process committed.
        found = asyncio.run(_search(url, "quokka"))
        assert len(found) == 1 and found[0].endswith("second.txt")

        second = _serve(data, free_port())
        assert second.wait(timeout=120) != 0
        message = second.stdout.read().decode()
        assert "another Bunko server" in message and f"port {port}" in message, message
        assert httpx.get(f"{url}/health", timeout=5).status_code == 200  # the first goes on
    finally:
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
    # SIGKILL released the lock: a new server starts on the folder.
    port = free_port()
    third = _serve(data, port)
    try:
        assert len(asyncio.run(_search(_wait_up(third, port), "quokka"))) == 1
    finally:
        third.send_signal(signal.SIGTERM)
        third.wait(timeout=60)
