"""Where a Cognito pool signs people out (issue 47, point 9): `/logout` on the sign-in domain
its authorization endpoint is on (its discovery names no end_session_endpoint), with the app
client's id and a sign-out URL; nothing for an issuer that is not a pool, lookalikes included.
The end_session_endpoint path runs against a real issuer in
tests/e2e/test_oidc_sign_in.py::test_signing_out_sends_the_browser_to_end_the_providers_session."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from bunko.services.accounts.oidc_sign_in import cognito_logout_url

POOL = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf"
DISCOVERY = {"authorization_endpoint":
             "https://bunko-1234.auth.eu-west-1.amazoncognito.com/oauth2/authorize"}  # fmt: skip
WEB_APP = "https://d111111abcdef8.cloudfront.net"


def test_a_pool_signs_out_on_its_sign_in_domain():
    url = cognito_logout_url(POOL, DISCOVERY, client_id="web-client", return_to=WEB_APP)
    assert url is not None
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == (
        "https", "bunko-1234.auth.eu-west-1.amazoncognito.com", "/logout",
    )  # fmt: skip
    assert parse_qs(parts.query) == {"client_id": ["web-client"], "logout_uri": [WEB_APP]}


@pytest.mark.parametrize(
    "issuer",
    [
        "https://login.example.org",
        "https://cognito-idp.eu-west-1.amazonaws.com.example.org/eu-west-1_AbCdEf",
        "https://evil-cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf",
    ],
)
def test_other_issuers_have_no_cognito_sign_out(issuer):
    assert cognito_logout_url(issuer, DISCOVERY, client_id="c", return_to=WEB_APP) is None


def test_a_pool_without_an_https_authorization_endpoint_has_none():
    plain = {"authorization_endpoint": "http://bunko.auth.eu-west-1.amazoncognito.com/x"}
    assert cognito_logout_url(POOL, plain, client_id="c", return_to=WEB_APP) is None
    assert cognito_logout_url(POOL, {}, client_id="c", return_to=WEB_APP) is None
