"""Finding 6, last part: no upload rate or storage quota per user. Over a real server, a
user past the rate's burst gets 429 with the exact Retry-After and past the quota 413, from
REST and MCP alike (MCP says the wait in words and as retryAfterSeconds), while other users
upload on; deleting files frees quota."""

from __future__ import annotations

import pytest

from tests.e2e.mcp_harness import deployed, http_client, ok
from tests.e2e.rest_harness import assert_error

QUOTA = 3000

# The settings of the module's live server (the `fresh_rest` fixture, tests/conftest.py).
REST_SETTINGS = {"upload_rate_per_minute": 3, "upload_burst": 3, "upload_quota_bytes": QUOTA}


def upload(user, name: str, size: int):
    text = ("quota words " * (size // 12 + 1))[:size].encode()
    return user.client.post("/upload", files={"file": (name, text, "text/plain")})


def test_the_upload_rate_is_per_user(fresh_rest):
    alice, bob = fresh_rest.new_user(), fresh_rest.new_user()
    for i in range(3):
        assert upload(alice, f"a{i}.txt", 100).status_code == 201
    refused = upload(alice, "a3.txt", 100)
    message = assert_error(refused, 429)["message"]
    # a burst of 3, then one every 20 s: the wait is until the next token, said in words too
    wait = int(refused.headers["retry-after"])
    assert 18 <= wait <= 20 and f"try again in {wait} seconds" in message
    assert upload(bob, "b0.txt", 100).status_code == 201  # others are not slowed
    assert len(alice.client.get("/knowledge-bases").json()) == 3  # nothing stored


def test_the_storage_quota_is_per_user(fresh_rest):
    alice, bob = fresh_rest.new_user(), fresh_rest.new_user()
    first = upload(alice, "big.txt", 2000)
    assert first.status_code == 201
    over = upload(alice, "more.txt", 1500)
    assert "quota" in assert_error(over, 413)["message"]
    assert upload(bob, "big.txt", 2000).status_code == 201
    assert alice.client.delete(f"/knowledge-bases/{first.json()['id']}").status_code in (200, 204)
    assert upload(alice, "more.txt", 1500).status_code == 201  # deleting frees the quota


@pytest.mark.anyio
async def test_mcp_writes_count_against_the_same_limits(tmp_path):
    limits = {"upload_rate_per_minute": 2, "upload_burst": 2, "upload_quota_bytes": QUOTA}
    with deployed(tmp_path / "data", **limits) as kb:
        async with http_client(kb.url, kb.key("kb:read", "kb:write")) as client:
            for i in range(2):
                ok(
                    await client.call_tool(
                        "add_item_text", {"content": f"n{i}", "path": f"{i}.txt"}
                    )
                )
            refused = await client.call_tool("add_item_text", {"content": "n", "path": "x.txt"})
            assert refused.is_error and "rate" in refused.content[0].text
            wait = refused.structured_content["retryAfterSeconds"]
            assert 28 <= wait <= 30 and f"wait {wait} seconds" in refused.content[0].text
        async with http_client(kb.url, kb.key("kb:read", "kb:write")) as other:
            big = {"content": "q" * (QUOTA + 1), "path": "big.txt"}
            refused = await other.call_tool("add_item_text", big)
            assert refused.is_error and "quota" in refused.content[0].text
