"""The model endpoints' HTTP client (`bounded_client`: the OpenAI embedder, chat, reranker)
shares one verifying TLS context per process: a client is built per model call, and httpx
would otherwise load the CA bundle for each. Shared, it still refuses a certificate it
cannot verify."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bunko.adapters.bounded_http import bounded_client
from tests.e2e.forward_proxy import forward_proxy
from tests.self_signed_https import self_signed_https


def client() -> httpx.Client:
    return bounded_client(max_bytes=1024, max_seconds=10, timeout=10)


def test_clients_load_the_ca_bundle_once_per_process(monkeypatch):
    client().close()  # the process's first client may load it
    loads: list[object] = []
    original = ssl.SSLContext.load_verify_locations

    def counted(self, *args, **kwargs):
        loads.append(args or kwargs)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    for _ in range(5):
        client().close()
    assert loads == []


@pytest.fixture
def self_signed(tmp_path: Path) -> Iterator[str]:
    with self_signed_https(tmp_path) as url:
        yield url


def test_the_shared_context_still_refuses_an_unverified_certificate(self_signed):
    for _ in range(2):  # the second client, on the shared context, as the first
        with client() as http, pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY"):
            http.get(self_signed)


def test_through_a_proxys_tunnel_the_endpoints_certificate_is_still_checked(
    self_signed, monkeypatch
):
    """An https endpoint behind HTTPS_PROXY is reached through the proxy's CONNECT tunnel,
    and TLS runs end to end: the endpoint's certificate is checked, not the proxy's word."""
    with forward_proxy(monkeypatch) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        with client() as http, pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY"):
            http.get(self_signed)
        target = self_signed.removeprefix("https://").rstrip("/")
        assert [(method, where) for method, where, _ in proxy.log] == [("CONNECT", target)]
