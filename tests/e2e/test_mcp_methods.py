"""/mcp is POST only: a GET (the standalone event stream) and a DELETE (ending a session)
are answered 405 at once, on the MCP port and on `bunko serve`'s own port, for a valid key
as for none; the official client still works against it. (The stream function on AWS:
tests/aws/test_stream_and_index_setup.py.)"""

from __future__ import annotations

import uuid

import pytest

from bunko.server_app import create_app
from tests.conftest import make_services
from tests.e2e.live_server import LiveServer
from tests.e2e.mcp_harness import assert_refused_at_once, http_client, ok

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_on_the_mcp_port(kb, method):
    assert_refused_at_once(kb.url, method, kb.key("kb:read"))
    assert_refused_at_once(kb.url, method, None)


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_on_the_rest_port(tmp_path, method):
    services = make_services(tmp_path / "data", embedder="none")
    try:
        with LiveServer(create_app(services)) as server:
            assert services.apikeys is not None
            _, key = services.apikeys.create(workspace_id=str(uuid.uuid4()), scopes=("kb:read",))
            assert_refused_at_once(server.url, method, key)
    finally:
        services.close()


async def test_the_official_client_works_without_the_stream(kb):
    async with http_client(kb.url, kb.key("kb:read")) as client:
        assert ok(await client.call_tool("get_document_count", {}))["count"] == 0
