"""A real OpenID Connect issuer for the tests: oidc-provider-mock (a Flask app on authlib's
OAuth 2.0 / OpenID Connect server) on a free loopback port, in a thread.

It signs RS256 ID tokens with its own key (published at its JWKS) and runs the authorization
code flow behind an HTML form that takes the person's `sub`, as a browser submits it. People's
claims (groups included) are set with `PUT /users/<sub>`.

One setting is ours: its access tokens are JWTs (RFC 9068), made by authlib's own
`JWTBearerTokenGenerator` and signed with the issuer's key, whose audience is the `resource`
the client asked for (RFC 8707), as the MCP authorization spec expects of an authorization
server. The provider otherwise issues opaque access tokens, which no resource server can check
for an audience. `access_token_seconds` may be changed while it runs (negative: already
expired); ID tokens live `lifetime` (fixed when it starts).

Its discovery document lists no `code_challenge_methods_supported`, as Cognito's does not;
`code_challenge_methods=["S256"]` adds it (an issuer MCP clients accept as it is).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import flask
import httpx
import oidc_provider_mock
import werkzeug.serving
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator

from tests.e2e.live_server import LOOPBACK_TLS

TEMPLATES = Path(oidc_provider_mock.__file__).parent / "templates"


class _Subject:
    """authlib's view of the provider's user (which has `sub`, not `get_user_id`)."""

    def __init__(self, user: Any) -> None:
        self.user = user

    def get_user_id(self) -> str:
        return self.user.sub


class _ResourceBoundTokens(JWTBearerTokenGenerator):
    def __init__(self, issuer: Issuer) -> None:
        super().__init__(
            issuer="", expires_generator=lambda client, grant: issuer.access_token_seconds
        )

    def get_jwks(self) -> dict:
        return flask.g.oidc_provider_mock_storage.jwk.as_dict(is_private=True)

    def get_audiences(self, client: Any, user: Any, scope: str) -> str:
        return flask.request.form.get("resource") or client.get_client_id()

    def access_token_generator(self, client, grant_type, user, scope):
        self.issuer = flask.request.host_url.rstrip("/")
        return super().access_token_generator(client, grant_type, _Subject(user), scope)


@dataclass
class Issuer:
    port: int = 0
    lifetime: timedelta = timedelta(minutes=5)
    access_token_seconds: int = 300
    code_challenge_methods: list[str] | None = None  # listed in its discovery when given
    url: str = ""
    _server: Any = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> Issuer:
        """Serve a fresh provider (a new signing key, no users) on `port` (0: a free one,
        then kept, so `restart` is the same issuer with a new key: a key rotation)."""
        app = flask.Flask("bunko_test_issuer", template_folder=str(TEMPLATES))
        app.config["OAUTH2_ACCESS_TOKEN_GENERATOR"] = _ResourceBoundTokens(
            self
        ).access_token_generator
        oidc_provider_mock.init_app(app, access_token_max_age=self.lifetime)
        app.after_request(self._discovery_extras)
        app.secret_key = secrets.token_bytes(16)
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = werkzeug.serving.make_server("localhost", self.port, app, threaded=True)
        self.port = self._server.server_port
        self.url = f"http://localhost:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def _discovery_extras(self, response: flask.Response) -> flask.Response:
        if self.code_challenge_methods is not None and flask.request.path.endswith(
            "/.well-known/openid-configuration"
        ):
            document = response.get_json()
            document["code_challenge_methods_supported"] = self.code_challenge_methods
            response.set_data(flask.json.dumps(document))
        return response

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            assert self._thread is not None
            self._thread.join(5)
            self._server = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def set_person(self, sub: str, **claims: Any) -> None:
        response = httpx.put(f"{self.url}/users/{sub}", json=claims, timeout=10)
        assert response.status_code == 204, response.text

    def metadata(self) -> dict[str, Any]:
        return httpx.get(f"{self.url}/.well-known/openid-configuration", timeout=10).json()


@contextmanager
def oidc_issuer(**options: Any) -> Iterator[Issuer]:
    issuer = Issuer(**options).start()
    try:
        yield issuer
    finally:
        issuer.stop()


def submit_login_form(browser: httpx.Client, authorization_url: str, sub: str | None) -> str:
    """What a person does at the issuer: open its sign-in page and submit the form with their
    `sub` (None: press "Deny"). Returns where the issuer sends the browser back."""
    page = browser.get(authorization_url)
    assert page.status_code == 200, (page.status_code, page.headers, page.text)
    assert '<input type="text" name="sub"' in page.text  # the form a person fills in
    form = {"sub": sub} if sub is not None else {"action": "deny"}
    answer = browser.post(str(page.url), data=form)  # the form posts to its own URL
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def fragment(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).fragment).items()}


def web_sign_in(bunko_url: str, sub: str) -> dict[str, str]:
    """A person signs in to Bunko's web app with the issuer, as a browser does; the fragment
    of the address Bunko sends them to (`oidc_token`, or `oidc_error`)."""
    with httpx.Client(timeout=30, verify=LOOPBACK_TLS) as browser:
        sent = browser.get(bunko_url + "/auth/oidc/login")
        assert sent.status_code == 302, sent.text
        landed = browser.get(submit_login_form(browser, sent.headers["location"], sub))
        assert landed.status_code == 302, landed.text
        return fragment(landed.headers["location"])


def access_token(issuer: Issuer, sub: str, *, resource: str, client_id: str = "an-agent") -> str:
    """An access token for `resource` (RFC 8707), by the authorization code flow with the
    issuer's form, as any OAuth client gets one."""
    callback = "http://127.0.0.1:1/callback"
    metadata = issuer.metadata()
    with httpx.Client(timeout=30, verify=LOOPBACK_TLS) as browser:
        params = {"response_type": "code", "client_id": client_id, "redirect_uri": callback,
                  "scope": "openid", "state": "s", "nonce": "n", "resource": resource}  # fmt: skip
        url = metadata["authorization_endpoint"] + "?" + urlencode(params)
        code = query(submit_login_form(browser, url, sub))["code"]
        answer = browser.post(
            metadata["token_endpoint"], auth=(client_id, "an-agent-secret"),
            data={"grant_type": "authorization_code", "code": code, "redirect_uri": callback,
                  "resource": resource},
        )  # fmt: skip
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]
