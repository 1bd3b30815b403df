"""MCP over streamable HTTP with OAuth access tokens from the identity provider (the MCP
authorization spec), beside API keys: a real issuer (tests/oidc_issuer.py), a real Bunko
server (REST and /mcp on one port, as on AWS) and the official MCP client, which finds the
issuer through Bunko's protected-resource metadata, registers itself there, signs the person
in (the authorization code flow with PKCE and the RFC 8707 `resource`) and calls search_text.

Refused with 401 and `WWW-Authenticate: Bearer … error="invalid_token"`: a token for another
audience, an expired one, one signed with a key that is not the issuer's, and one for a person
who never signed in to Bunko.
"""

from __future__ import annotations

import time
import uuid

import anyio
import httpx
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.e2e.mcp_harness import ok
from tests.e2e.rest_harness import serve, wait_until_done
from tests.oidc_issuer import access_token, oidc_issuer, query, submit_login_form, web_sign_in

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::DeprecationWarning:authlib")]

NOTE = b"The lighthouse keeper logs the weather at dawn and at dusk."
COUNT_CALL = {
    "jsonrpc": "2.0", "id": 7, "method": "tools/call",
    "params": {"name": "get_document_count", "arguments": {}},
}  # fmt: skip


@pytest.fixture(scope="module")
def s256_issuer():
    # one MCP clients accept as it is (S256 listed): Bunko names it directly (an issuer
    # without, such as Cognito: test_mcp_oauth_metadata.py)
    with oidc_issuer(code_challenge_methods=["S256"]) as running:
        yield running


@pytest.fixture(scope="module")
def oauth_server(s256_issuer, tmp_path_factory):
    data = tmp_path_factory.mktemp("mcp-oauth") / "data"
    with serve(data, oidc_issuer=s256_issuer.url, oidc_client_id="bunko-web",
               oidc_client_secret="the-web-app-client-secret") as rest:  # fmt: skip
        yield rest


@pytest.fixture(scope="module")
def lin(oauth_server, s256_issuer):
    """A person who signed in to the web app once, with a note in their own library."""
    s256_issuer.set_person("lin-sub", preferred_username="lin")
    token = web_sign_in(oauth_server.url, "lin-sub")["oidc_token"]
    with oauth_server.client(token) as client:
        uploaded = client.post("/upload", files={"file": ("log.txt", NOTE, "text/plain")})
        assert uploaded.status_code == 201, uploaded.text
        assert wait_until_done(client, uploaded.json()["id"])["status"] == "completed"
    return token


class Memory:
    """The MCP client's token storage (TokenStorage), in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def mcp_call(oauth_server, token: str, body: dict = COUNT_CALL) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    return httpx.post(oauth_server.url + "/mcp", json=body, headers=headers, timeout=30)


def refused(response: httpx.Response) -> str:
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge
    assert "resource_metadata=" in challenge
    return challenge


def test_the_metadata_names_the_issuer(oauth_server, s256_issuer):
    metadata = httpx.get(
        oauth_server.url + "/.well-known/oauth-protected-resource/mcp", timeout=30
    ).json()
    assert metadata["resource"] == oauth_server.url + "/mcp"
    assert metadata["authorization_servers"] == [s256_issuer.url]
    assert metadata["scopes_supported"] == ["openid"]  # the issuer's, not Bunko's key scopes


async def test_an_mcp_client_gets_a_token_from_the_issuer_and_searches(
    oauth_server, s256_issuer, lin
):
    sent_back: list[str] = []

    async def person_at_the_issuer(authorization_url: str) -> None:
        assert query(authorization_url)["resource"] == oauth_server.url + "/mcp"  # RFC 8707
        assert query(authorization_url)["code_challenge_method"] == "S256"

        def browse() -> str:
            with httpx.Client(timeout=30) as browser:
                return submit_login_form(browser, authorization_url, "lin-sub")

        sent_back.append(await anyio.to_thread.run_sync(browse))

    async def callback() -> AuthorizationCodeResult:
        returned = query(sent_back[-1])
        return AuthorizationCodeResult(code=returned["code"], state=returned["state"])

    storage = Memory()
    auth = OAuthClientProvider(
        server_url=oauth_server.url + "/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="an agent", redirect_uris=["http://127.0.0.1:1/callback"],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="client_secret_post",
        ),
        storage=storage, redirect_handler=person_at_the_issuer, callback_handler=callback,
    )  # fmt: skip
    async with (
        httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(60.0)) as http,
        Client(streamable_http_client(oauth_server.url + "/mcp", http_client=http)) as client,
    ):
        found = ok(await client.call_tool("search_text", {"content": "lighthouse keeper"}))
    assert found["items"][0]["content"].startswith("The lighthouse keeper")
    assert len(sent_back) == 1  # one sign-in at the issuer
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert claims["aud"] == oauth_server.url + "/mcp" and claims["sub"] == "lin-sub"
    assert claims["iss"] == s256_issuer.url


def test_a_token_for_another_audience_is_refused(oauth_server, s256_issuer, lin):
    elsewhere = access_token(s256_issuer, "lin-sub", resource="https://another.example.org/mcp")
    challenge = refused(mcp_call(oauth_server, elsewhere))
    assert "for another audience" in challenge
    ours = access_token(s256_issuer, "lin-sub", resource=oauth_server.url + "/mcp")
    assert mcp_call(oauth_server, ours).status_code == 200  # the same person, for this resource


def test_an_expired_token_is_refused(oauth_server, s256_issuer, lin):
    s256_issuer.access_token_seconds = -300  # expired five minutes ago: past any clock skew
    try:
        stale = access_token(s256_issuer, "lin-sub", resource=oauth_server.url + "/mcp")
    finally:
        s256_issuer.access_token_seconds = 300
    assert "expired" in refused(mcp_call(oauth_server, stale))


def test_a_token_not_signed_by_the_issuer_is_refused(oauth_server, s256_issuer, lin):
    genuine = access_token(s256_issuer, "lin-sub", resource=oauth_server.url + "/mcp")
    claims = jwt.decode(genuine, options={"verify_signature": False})
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = jwt.get_unverified_header(genuine).get("kid")
    forged = jwt.encode(claims | {"exp": int(time.time()) + 300}, key, algorithm="RS256",
                        headers={"typ": "at+jwt"} | ({"kid": kid} if kid else {}))  # fmt: skip
    assert "did not verify" in refused(mcp_call(oauth_server, forged))
    tampered = genuine.split(".")
    tampered[1] = jwt.utils.base64url_encode(
        jwt.api_jws.json.dumps(claims | {"sub": "someone-else"}).encode()
    ).decode()
    refused(mcp_call(oauth_server, ".".join(tampered)))


def test_a_person_who_never_signed_in_gets_no_access(oauth_server, s256_issuer):
    s256_issuer.set_person("stranger-sub", preferred_username="stranger")
    token = access_token(s256_issuer, "stranger-sub", resource=oauth_server.url + "/mcp")
    assert "sign in to the web app once" in refused(mcp_call(oauth_server, token))


def test_api_keys_still_work_beside(oauth_server):
    _, key = oauth_server.services.apikeys.create(
        workspace_id=str(uuid.uuid4()), scopes=("kb:read",)
    )
    assert mcp_call(oauth_server, key).status_code == 200
    refused(mcp_call(oauth_server, "bk_not-a-real-key"))
