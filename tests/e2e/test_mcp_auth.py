"""Auth over HTTP: 401 with a challenge, 403 per tool scope, workspaces kept apart."""

from __future__ import annotations

import httpx
import pytest
from mcp import MCPError

from bunko.config import Settings
from bunko.embedded_server import check_bind
from bunko.mcp.http import transport_security
from tests.e2e.mcp_harness import deployed, http_client, mcp_error_in, ok

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}
COUNT_CALL = {
    "jsonrpc": "2.0", "id": 7, "method": "tools/call",
    "params": {"name": "get_document_count", "arguments": {}},
}  # fmt: skip


def tools_call(name: str, arguments: dict, request_id: int = 7) -> dict:
    return {
        "jsonrpc": "2.0", "id": request_id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }  # fmt: skip


def post(kb, body: dict, key: str | None = None, path: str = "/mcp") -> httpx.Response:
    headers = dict(ACCEPT, **({"Authorization": f"Bearer {key}"} if key else {}))
    return httpx.post(kb.url + path, json=body, headers=headers, timeout=30)


@pytest.mark.parametrize("path", ["/mcp", "/sse", "/messages?session_id=0"])
def test_missing_key_is_401_with_a_challenge_naming_the_metadata(kb, path):
    if path == "/sse":
        response = httpx.get(kb.url + path, timeout=30)
    else:
        response = post(kb, COUNT_CALL, path=path)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    resource = "/sse" if path != "/mcp" else "/mcp"
    assert (
        f'resource_metadata="{kb.url}/.well-known/oauth-protected-resource{resource}"' in challenge
    )
    assert "error=" not in challenge  # RFC 6750: no error code when no token was sent


@pytest.mark.parametrize("token", ["bk_not-a-real-key", "garbage", "Bearer"])
def test_bad_key_is_401_invalid_token(kb, token):
    response = post(kb, COUNT_CALL, token)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert response.json()["error"]["message"].startswith("unauthorized")


def test_a_revoked_key_stops_working(kb):
    key = kb.key("kb:read")
    assert post(kb, COUNT_CALL, key).status_code == 200
    principal = kb.services.identity.authenticate(key)
    kb.services.apikeys.revoke(principal.api_key_id)
    assert post(kb, COUNT_CALL, key).status_code == 401


def test_a_key_without_the_tools_scope_gets_403_and_nothing_runs(kb):
    key = kb.key("kb:read")
    body = tools_call("add_item_text", {"content": "x", "path": "x.txt"}, request_id=41)
    response = post(kb, body, key)
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="kb:write"' in challenge
    assert response.json()["id"] == 41 and response.json()["error"]["code"] == -32003
    assert kb.services.metadata.count_documents(kb.workspace_of(key)) == 0
    admin_only = post(kb, tools_call("lsa_retrain", {}), kb.key("kb:read", "kb:write"))
    assert (
        admin_only.status_code == 403 and 'scope="admin"' in admin_only.headers["www-authenticate"]
    )


async def test_the_official_client_sees_the_refusals(kb):
    with pytest.raises(BaseException) as refused:
        async with http_client(kb.url, None) as client:
            await client.list_tools()
    error = mcp_error_in(refused.value)
    assert error is not None and "unauthorized" in str(error)
    async with http_client(kb.url, kb.key("kb:read")) as client:
        assert (await client.list_tools()).tools  # listing needs no particular scope
        ok(await client.call_tool("search_text", {"content": "anything"}))
        with pytest.raises(MCPError, match="needs the kb:write scope"):
            await client.call_tool(
                "delete_document", {"id": "6f1c1a52-7d1e-4b8e-9a43-0b0e5b1f2c11"}
            )


async def test_admin_implies_every_scope(kb):
    async with http_client(kb.url, kb.key("admin")) as client:
        ok(await client.call_tool("add_item_text", {"content": "Admins write.", "path": "a.txt"}))
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 1}


async def test_workspaces_never_see_each_other(kb):
    owner, stranger = kb.key("kb:read", "kb:write"), kb.key("kb:read", "kb:write")
    async with http_client(kb.url, owner) as client:
        added = ok(
            await client.call_tool(
                "add_item_text", {"content": "Secret plans for the moon.", "path": "plans.txt"}
            )
        )
    doc_id, item_id = added["document_id"], added["item_ids"][0]
    async with http_client(kb.url, stranger) as client:
        for name, args in (
            ("get_document", {"id": doc_id}),
            ("get_item_by_id", {"id": item_id}),
            ("update_item", {"id": item_id, "content": "defaced"}),
            ("delete_item", {"id": item_id}),
            ("delete_document", {"id": doc_id}),
        ):
            result = await client.call_tool(name, args)
            assert result.is_error and "not found" in result.content[0].text, name
        found = ok(await client.call_tool("search_text", {"content": "moon plans", "min_score": 0}))
        assert found["items"] == []
        assert ok(await client.call_tool("list_documents", {}))["total_count"] == 0
        assert ok(await client.call_tool("get_document_count", {})) == {"count": 0}
    async with http_client(kb.url, owner) as client:
        still = ok(await client.call_tool("get_item_by_id", {"id": item_id}))
        assert still["content"] == "Secret plans for the moon."


def test_protected_resource_metadata(kb):
    for suffix in ("", "/mcp", "/sse"):
        response = httpx.get(kb.url + "/.well-known/oauth-protected-resource" + suffix, timeout=30)
        assert response.status_code == 200
        body = response.json()
        assert body["resource"] == kb.url + suffix
        assert body["bearer_methods_supported"] == ["header"]
        assert {"kb:read", "kb:write", "agent:research", "admin"} <= set(body["scopes_supported"])


async def test_auth_off_serves_the_local_user_without_a_key(tmp_path):
    with deployed(tmp_path / "data", auth="off") as local:
        async with http_client(local.url, None) as client:
            ok(await client.call_tool("add_item_text", {"content": "Mine.", "path": "m.txt"}))
            assert ok(await client.call_tool("get_document_count", {})) == {"count": 1}


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.org"])
def test_auth_off_is_refused_off_loopback(host):
    with pytest.raises(SystemExit, match="not a loopback"):
        check_bind(Settings(auth="off", host=host))
    check_bind(Settings(auth="on", host=host))
    check_bind(Settings(auth="off", host="127.0.0.1"))


def test_loopback_server_refuses_a_rebound_host_but_aws_does_not_check(kb):
    key = kb.key("kb:read")
    rebound = httpx.post(
        kb.url + "/mcp", json=COUNT_CALL, timeout=30,
        headers=dict(ACCEPT, Authorization=f"Bearer {key}", Host="evil.example"),
    )  # fmt: skip
    assert rebound.status_code == 421
    assert transport_security(Settings(backend="aws")) is None
    assert transport_security(Settings(host="0.0.0.0")) is None
