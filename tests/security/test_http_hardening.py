"""Findings 3, 4 and 6 (headers, body timeouts) on both ports of a real server: bodies over
the limit are refused before they are read (the MCP port read 400 MB before its 401), a
stalled body is cut off, a rebound Host is refused on every route (with auth off a web page
could change /settings), and every response carries the security headers."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.security.servers import both_ports, raw_exchange, status_of

MB = 1024 * 1024


@pytest.fixture(scope="module")
def hardened_ports(tmp_path_factory):
    with both_ports(
        tmp_path_factory.mktemp("sec-http") / "data",
        auth="off",  # where rebinding hurts most: the server trusts every local caller
        max_file_bytes=MB,
        body_timeout_seconds=1,
    ) as p:
        yield p


def head(url: str, path: str, extra: str = "") -> bytes:
    host = url.removeprefix("http://")
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{extra}\r\n"
    ).encode()


@pytest.mark.parametrize("port", ["rest", "mcp"])
def test_a_declared_oversized_body_is_refused_before_it_is_read(hardened_ports, port):
    url = hardened_ports.urls()[port]
    started = time.monotonic()
    # 400 MB announced, not one byte sent: only a server that answers before reading replies
    response = raw_exchange(url, head(url, "/settings", f"Content-Length: {400 * MB}\r\n"))
    assert status_of(response) == 413, response[:200]
    assert time.monotonic() - started < 15


@pytest.mark.parametrize("port", ["rest", "mcp"])
def test_a_streamed_oversized_body_is_cut_off(hardened_ports, port):
    url = hardened_ports.urls()[port]
    chunk = b"x" * (256 * 1024)

    def body():
        for _ in range(40):  # 10 MB against a 1 MB limit (+1 MB for multipart framing)
            yield chunk

    response = httpx.post(url + "/settings", content=body(), timeout=30)
    assert response.status_code == 413
    assert response.json()["statusCode"] == 413


@pytest.mark.parametrize("port", ["rest", "mcp"])
def test_a_stalled_body_is_cut_off(hardened_ports, port):
    url = hardened_ports.urls()[port]
    response = raw_exchange(url, head(url, "/settings", "Content-Length: 100\r\n"), b'{"a"')
    assert status_of(response) == 408, response[:200]


@pytest.mark.parametrize("port", ["rest", "mcp"])
@pytest.mark.parametrize("path", ["/settings", "/indexing_status", "/health", "/mcp"])
def test_a_rebound_host_is_refused_on_every_route(hardened_ports, port, path):
    url = hardened_ports.urls()[port]
    with httpx.Client(base_url=url, timeout=30) as client:
        rebound = client.post(
            path, json={"monitor_paths": ["/"]}, headers={"Host": "evil.example:3000"}
        )
        assert rebound.status_code == 421, (path, rebound.text)
        assert rebound.json()["statusCode"] == 421
        for name in ("localhost", "127.0.0.1", "[::1]"):
            port_number = url.rsplit(":", 1)[1]
            ok = client.get("/version", headers={"Host": f"{name}:{port_number}"})
            assert ok.status_code in (200, 404), (name, ok.text)  # served, not 421


def test_a_rebound_host_gets_each_doors_error_shape_and_is_documented(hardened_ports):
    """421 can answer any operation, so /openapi.json names it on every one, and the /v1/
    door answers it in OpenAI's error shape, as every other /v1/ error."""
    url = hardened_ports.urls()["rest"]
    with httpx.Client(base_url=url, timeout=30, headers={"Host": "evil.example"}) as client:
        openai_door = client.get("/v1/models")
        assert openai_door.status_code == 421
        assert openai_door.json()["error"]["message"] == "invalid Host header"
    schema = httpx.get(url + "/openapi.json", timeout=30).json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "421" in operation["responses"], (method, path)


def test_the_rebinding_attack_changes_nothing(hardened_ports):
    before = httpx.get(hardened_ports.mcp + "/settings", timeout=30).json()
    attack = httpx.post(
        hardened_ports.mcp + "/settings", json={"monitor_paths": ["/"]},
        headers={"Host": "rebind.attacker.example"}, timeout=30,
    )  # fmt: skip
    assert attack.status_code == 421
    assert httpx.get(hardened_ports.mcp + "/settings", timeout=30).json() == before


@pytest.mark.parametrize("port", ["rest", "mcp"])
def test_every_response_carries_the_security_headers(hardened_ports, port):
    url = hardened_ports.urls()[port]
    with httpx.Client(base_url=url, timeout=30) as client:
        responses = [
            client.get("/version"),
            client.get("/no-such-page"),
            client.post("/settings", content=b"{not json"),
            client.get("/settings", headers={"Host": "evil.example"}),
        ]
    for response in responses:
        assert response.headers["x-content-type-options"] == "nosniff", response.url
        assert response.headers["x-frame-options"] == "DENY"
        csp = response.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "script-src 'self';" in csp  # no inline or foreign scripts
