"""`bunko serve` listens for MCP on its own port (3001 by default), as TelosDB does; this
runs the real command with the default multilingual model and a key from `bunko apikey`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.e2e.mcp_harness import http_client, ok, sse_session
from tests.waiting import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real `bunko serve` processes


def bunko(*args: str) -> list[str]:
    return [sys.executable, "-m", "bunko.cli", *args]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`bunko serve` with the default (USE) embedder on two free ports."""
    root = tmp_path_factory.mktemp("serve")
    data = root / "data"
    env = {**os.environ, "BUNKO_EMBEDDER": "use"}
    created = subprocess.run(
        [*bunko("apikey", "create", "--scopes", "kb:read,kb:write", "--json"),
         "--data-dir", str(data)],
        capture_output=True, text=True, env=env, cwd=root, timeout=300, check=True,
    )  # fmt: skip
    key = json.loads(created.stdout)["key"]
    rest, mcp = free_port(), free_port()
    process = subprocess.Popen(
        [*bunko("serve"), "--data-dir", str(data), "--port", str(rest),
         "--mcp-port", str(mcp), "--no-watch"],
        env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    urls = (f"http://127.0.0.1:{rest}", f"http://127.0.0.1:{mcp}")
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None, process.stderr.read()
            try:
                if all(
                    httpx.get(u + "/.well-known/oauth-protected-resource").is_success for u in urls
                ):
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "bunko serve did not come up"
            time.sleep(0.25)
        yield {"rest": urls[0], "mcp": urls[1], "key": key}
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


async def test_mcp_port_serves_streamable_http_with_the_default_model(served):
    async with http_client(served["mcp"], served["key"]) as client:
        added = ok(
            await client.call_tool(
                "add_item_text",
                {"content": "東京の桜は三月末から四月初めに満開になります。", "path": "sakura.md"},
            )
        )
        assert added["status"] == "completed"
        found = ok(
            await client.call_tool("search_text", {"content": "桜はいつ咲きますか", "min_score": 0})
        )
        assert found["vector_search_used"] is True
        assert found["items"][0]["document_id"] == added["document_id"]


async def test_mcp_port_serves_legacy_sse_and_telosdb_http_api(served):
    async with sse_session(served["mcp"], served["key"]) as client:
        assert ok(await client.call_tool("get_document_count", {}))["count"] >= 0
    version = httpx.get(served["mcp"] + "/version", timeout=30)
    assert version.status_code == 200 and "version" in version.json()


async def test_rest_port_mounts_streamable_http_too(served):
    async with http_client(served["rest"], served["key"]) as client:
        assert "search_text" in {t.name for t in (await client.list_tools()).tools}
    assert httpx.post(served["rest"] + "/mcp", json={}, timeout=30).status_code == 401


def test_auth_off_on_a_public_address_refuses_to_start(tmp_path):
    done = subprocess.run(
        [*bunko("serve"), "--data-dir", str(tmp_path / "data"), "--host", "0.0.0.0",
         "--port", str(free_port()), "--mcp-port", str(free_port()), "--no-watch"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "BUNKO_AUTH": "off", "BUNKO_EMBEDDER": "none"},
    )  # fmt: skip
    assert done.returncode != 0
    assert "not a loopback" in done.stderr
