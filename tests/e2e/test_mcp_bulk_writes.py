"""An agent writing hundreds of notes over MCP (the official client, streamable HTTP, one
API key): 300 add_item_text calls all land. With the default limits the burst holds them
all; with a small burst the server refuses some for pace, saying the wait in words and as
`retryAfterSeconds`, and a client that waits that long and calls again loses none."""

from __future__ import annotations

import re
import time

import anyio
import pytest

from bunko.domain.auth import SCOPE_READ, SCOPE_WRITE
from tests.e2e.mcp_harness import deployed, http_client, ok

pytestmark = pytest.mark.slow  # hundreds of writes in bursts

NOTES = 300
AT_ONCE = 8  # calls in flight, as an agent running tools in parallel


async def add_all(client, waits: list[int]) -> None:
    """Every note, each called again after the advertised wait until it lands."""
    pending = iter(range(NOTES))

    async def worker() -> None:
        for n in pending:
            arguments = {"content": f"Bulk note {n}: the keeper logs the tide.", "path": f"n{n}.md"}
            while True:
                result = await client.call_tool("add_item_text", arguments)
                if not result.is_error:
                    ok(result)
                    break
                text = result.content[0].text
                wait = result.structured_content["retryAfterSeconds"]
                assert f"wait {wait} second" in text and re.search(
                    r"call add_item_text again", text
                )
                waits.append(wait)
                await anyio.sleep(wait)

    async with anyio.create_task_group() as group:
        for _ in range(AT_ONCE):
            group.start_soon(worker)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "limits",
    [{}, {"upload_burst": 40, "upload_rate_per_minute": 1200}],
    ids=["default limits", "small burst: waits"],
)
async def test_300_notes_from_one_key_all_land(tmp_path, limits):
    with deployed(tmp_path / "data", **limits) as kb:
        key = kb.key(SCOPE_READ, SCOPE_WRITE)
        waits: list[int] = []
        started = time.monotonic()
        async with http_client(kb.url, key) as client:
            await add_all(client, waits)
            count = ok(await client.call_tool("get_document_count", {}))
        assert count["count"] == NOTES
        assert kb.services.metadata.count_documents(kb.workspace_of(key)) == NOTES
        if limits:
            assert waits and max(waits) <= 1  # a token every 50 ms: never more than a second
        else:
            assert waits == []  # the default burst holds an agent's batch of notes
        assert time.monotonic() - started < 240
