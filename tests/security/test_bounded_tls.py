"""The model endpoints' HTTP client (`bounded_client`: the OpenAI embedder, chat, reranker)
shares one verifying TLS context per process: a client is built per model call, and httpx
would otherwise load the CA bundle for each. Shared, it still refuses a certificate it
cannot verify."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bunko.adapters.bounded_http import bounded_client
from tests.e2e.forward_proxy import forward_proxy


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
def self_signed_https(tmp_path: Path) -> Iterator[str]:
    """An HTTPS server on loopback whose certificate no CA signed."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    pem = tmp_path / "server.pem"
    pem.write_bytes(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pem)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_shared_context_still_refuses_an_unverified_certificate(self_signed_https):
    for _ in range(2):  # the second client, on the shared context, as the first
        with client() as http, pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY"):
            http.get(self_signed_https)


def test_through_a_proxys_tunnel_the_endpoints_certificate_is_still_checked(
    self_signed_https, monkeypatch
):
    """An https endpoint behind HTTPS_PROXY is reached through the proxy's CONNECT tunnel,
    and TLS runs end to end: the endpoint's certificate is checked, not the proxy's word."""
    with forward_proxy(monkeypatch) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        with client() as http, pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY"):
            http.get(self_signed_https)
        target = self_signed_https.removeprefix("https://").rstrip("/")
        assert [(method, where) for method, where, _ in proxy.log] == [("CONNECT", target)]
