"""The `bunko` command as a real process: one command run to its end (`run`), and a
`bunko serve` started on free ports and waited for (`serve_bunko`), searched over MCP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.e2e.mcp_harness import http_client, ok
from tests.waiting import free_port

BUNKO = [sys.executable, "-m", "bunko.cli"]


def run(args, data_dir, *, env=None, check=True):
    full_env = {
        **os.environ,
        "BUNKO_DATA_DIR": str(data_dir),
        "BUNKO_EMBEDDER": "none",
        **(env or {}),
    }
    proc = subprocess.run(
        [*BUNKO, *args], capture_output=True, text=True, env=full_env, timeout=600
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"bunko {args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def bunko_env(data: Path, embedder: str = "none") -> dict[str, str]:
    # One BLAS thread for a model: the test shares its cores. One local user (auth off):
    # searches read the default workspace, where the drop folder's files go.
    return {**os.environ, "BUNKO_DATA_DIR": str(data), "BUNKO_EMBEDDER": embedder,
            "BUNKO_EMBED_THREADS": "1", "BUNKO_AUTH": "off"}  # fmt: skip


def serve_bunko(data: Path, log: Path, embedder: str = "none") -> tuple[subprocess.Popen, int]:
    """`bunko serve` on free ports, its output appended to `log`: (process, REST port)."""
    port = free_port()
    server = subprocess.Popen(
        [*BUNKO, "serve", "--port", str(port), "--mcp-port", str(free_port())],
        env=bunko_env(data, embedder),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
            return server, port
        except httpx.TransportError:
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)


async def mcp_search(url: str, query: str) -> dict:
    """search_text over MCP with no cut-off: the hits as ranked, with their scores."""
    async with http_client(url, None) as client:
        return ok(await client.call_tool("search_text", {"content": query, "min_score": 0}))
