"""MCP clients and an identity provider whose discovery lists no S256 (Cognito's; issue 47,
point 3): Bunko names itself as the authorization server and serves its own RFC 8414
metadata (the issuer's endpoints, S256), and the official MCP client, with a pre-registered
client id (Cognito has no dynamic registration), completes OAuth through it against a real
issuer (tests/oidc_issuer.py without `code_challenge_methods_supported`) and calls a tool.

The MCP authorization spec (2025-11-25) has every client refuse an authorization server whose
metadata lists no S256 (Claude Code, Cursor, MCP Inspector and claude.ai do); the SDK in use
does not check it yet, so `SpecClient` adds that one check, and is refused by the issuer's
own metadata: what MCP clients met before.
"""

from __future__ import annotations

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.e2e.mcp_harness import ok
from tests.e2e.rest_harness import serve, wait_until_done
from tests.oidc_issuer import query, submit_login_form, web_sign_in

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::DeprecationWarning:authlib")]

NOTE = b"The lighthouse keeper logs the weather at dawn and at dusk."
CALLBACK = "http://127.0.0.1:1/callback"
MCP_CLIENT_ID = "bunko-mcp"  # pre-registered at the issuer, as the stack's McpClientId
SERVER = {"oidc_client_id": "bunko-web", "oidc_client_secret": "the-web-app-client-secret"}


@pytest.fixture(scope="module")
def cognito_like_server(issuer, tmp_path_factory):
    data = tmp_path_factory.mktemp("mcp-oauth-metadata") / "data"
    with serve(data, oidc_issuer=issuer.url, **SERVER) as rest:
        yield rest


@pytest.fixture(scope="module")
def lin_token(cognito_like_server, issuer):
    """A person who signed in to the web app once, with a note in their own library."""
    issuer.set_person("lin-sub", preferred_username="lin")
    token = web_sign_in(cognito_like_server.url, "lin-sub")["oidc_token"]
    with cognito_like_server.client(token) as client:
        uploaded = client.post("/upload", files={"file": ("log.txt", NOTE, "text/plain")})
        assert uploaded.status_code == 201, uploaded.text
        assert wait_until_done(client, uploaded.json()["id"])["status"] == "completed"
    return token


class Memory:
    """The MCP client's storage, holding the pre-registered client from the start."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        # with a secret: the test issuer serves confidential clients only (the stack's MCP
        # client is public, PKCE alone: token_endpoint_auth_method "none")
        self.client: OAuthClientInformationFull | None = OAuthClientInformationFull(
            client_id=MCP_CLIENT_ID, client_secret="the-mcp-client-secret",
            redirect_uris=[CALLBACK], token_endpoint_auth_method="client_secret_post",
        )  # fmt: skip

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class SpecClient(OAuthClientProvider):
    """The SDK's OAuth client plus the spec's check it lacks: an authorization server whose
    metadata does not list S256 is refused before the person is sent anywhere."""

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        metadata = self.context.oauth_metadata
        methods = metadata.code_challenge_methods_supported if metadata else None
        if not methods or "S256" not in methods:
            raise OAuthFlowError("the authorization server does not support S256: refused")
        return await super()._perform_authorization_code_grant()


def agent(server_url: str, sub: str, sent_to: list[str]) -> SpecClient:
    """An MCP client for `server_url` whose person signs in at the issuer as `sub`."""

    async def person_at_the_issuer(authorization_url: str) -> None:
        sent_to.append(authorization_url)

        def browse() -> str:
            with httpx.Client(timeout=30) as browser:
                return submit_login_form(browser, authorization_url, sub)

        sent_to.append(await anyio.to_thread.run_sync(browse))

    async def callback() -> AuthorizationCodeResult:
        returned = query(sent_to[-1])
        return AuthorizationCodeResult(code=returned["code"], state=returned["state"])

    return SpecClient(
        server_url=server_url,
        client_metadata=OAuthClientMetadata(
            client_name="an agent", redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage=Memory(), redirect_handler=person_at_the_issuer, callback_handler=callback,
    )  # fmt: skip


async def search(auth: SpecClient, server_url: str) -> dict:
    async with (
        httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(60.0)) as http,
        Client(streamable_http_client(server_url, http_client=http)) as client,
    ):
        return ok(await client.call_tool("search_text", {"content": "lighthouse keeper"}))


def test_bunko_stands_in_for_an_issuer_that_lists_no_s256(cognito_like_server, issuer):
    upstream = issuer.metadata()
    assert "code_challenge_methods_supported" not in upstream
    resource = httpx.get(
        cognito_like_server.url + "/.well-known/oauth-protected-resource/mcp", timeout=30
    ).json()
    assert resource["authorization_servers"] == [cognito_like_server.url]
    assert resource["scopes_supported"] == ["openid"]  # the issuer's, as before
    for path in ("oauth-authorization-server", "openid-configuration"):
        document = httpx.get(f"{cognito_like_server.url}/.well-known/{path}", timeout=30).json()
        assert (
            document["issuer"] == cognito_like_server.url
        )  # the server the resource metadata names
        assert document["code_challenge_methods_supported"] == ["S256"]
        for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            assert document[name] == upstream[name]
        assert document["response_types_supported"] == ["code"]
        assert document["grant_types_supported"] == ["authorization_code", "refresh_token"]


async def test_an_mcp_client_signs_in_through_bunkos_metadata_and_searches(
    cognito_like_server, issuer, lin_token
):
    sent_to: list[str] = []
    auth = agent(cognito_like_server.url + "/mcp", "lin-sub", sent_to)
    found = await search(auth, cognito_like_server.url + "/mcp")
    assert found["items"][0]["content"].startswith("The lighthouse keeper")
    authorization = query(sent_to[0])
    assert sent_to[0].startswith(issuer.metadata()["authorization_endpoint"] + "?")
    assert authorization["client_id"] == MCP_CLIENT_ID  # pre-registered, nothing registered
    assert authorization["code_challenge_method"] == "S256"
    assert authorization["resource"] == cognito_like_server.url + "/mcp"
    assert str(auth.context.oauth_metadata.issuer).rstrip("/") == cognito_like_server.url


async def test_without_bunkos_metadata_the_client_refuses_the_issuer(issuer, tmp_path):
    """The same issuer named directly (BUNKO_MCP_AUTHORIZATION_SERVERS): what MCP clients
    met before: refused, and nobody is sent to sign in."""
    with serve(tmp_path / "data", oidc_issuer=issuer.url, mcp_authorization_servers=[issuer.url],
               **SERVER) as direct:  # fmt: skip
        sent_to: list[str] = []
        with pytest.raises(Exception) as refused:  # the SDK wraps it in exception groups
            await search(agent(direct.url + "/mcp", "lin-sub", sent_to), direct.url + "/mcp")
        assert "does not support S256" in "".join(_messages(refused.value))
        assert sent_to == []


def _messages(error: BaseException) -> list[str]:
    if isinstance(error, BaseExceptionGroup):
        return [m for e in error.exceptions for m in _messages(e)]
    return [str(error), *(_messages(error.__cause__) if error.__cause__ else [])]


def test_without_an_issuer_there_is_no_authorization_server_metadata(tmp_path):
    with serve(tmp_path / "data") as keys_only:
        for path in ("oauth-authorization-server", "openid-configuration"):
            answer = httpx.get(f"{keys_only.url}/.well-known/{path}", timeout=30)
            assert answer.status_code == 404, answer.text
        resource = httpx.get(keys_only.url + "/.well-known/oauth-protected-resource", timeout=30)
        assert "authorization_servers" not in resource.json()  # API keys, as before
