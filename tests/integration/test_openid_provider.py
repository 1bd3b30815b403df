"""HttpOpenIdProvider against a real issuer (tests/oidc_issuer.py): its tokens verify with the
keys it publishes; a rotated key is fetched again (at most once per cooldown, so made-up
tokens cannot make Bunko hammer the issuer); a tampered token, a foreign key, a symmetric or
`none` algorithm and a discovery document naming another issuer are refused."""

from __future__ import annotations

import base64
import json
import time

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from bunko.adapters.openid_provider import HttpOpenIdProvider
from bunko.errors import AuthenticationError, ServiceUnavailableError
from tests.oidc_issuer import access_token, query, submit_login_form

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:authlib")
RESOURCE = "http://127.0.0.1:9/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def counting_client() -> tuple[httpx.Client, list[str]]:
    fetched: list[str] = []
    client = httpx.Client(
        timeout=10, event_hooks={"request": [lambda r: fetched.append(r.url.path)]}
    )
    return client, fetched


def test_a_token_verifies_with_the_issuers_published_key(issuer):
    provider = HttpOpenIdProvider(issuer.url)
    claims = provider.verified_claims(access_token(issuer, "ada", resource=RESOURCE))
    assert (claims["iss"], claims["sub"], claims["aud"]) == (issuer.url, "ada", RESOURCE)


def test_a_rotated_key_is_fetched_again_once_the_cooldown_has_passed(issuer):
    http, fetched = counting_client()
    clock = Clock()
    provider = HttpOpenIdProvider(issuer.url, http=http, refresh_cooldown=10, clock=clock)
    before = access_token(issuer, "ada", resource=RESOURCE)
    provider.verified_claims(before)
    issuer.restart()  # the same issuer with a new signing key: the old one is withdrawn
    after = access_token(issuer, "ada", resource=RESOURCE)
    with pytest.raises(AuthenticationError):  # within the cooldown: the cached set only
        provider.verified_claims(after)
    assert fetched.count("/jwks") == 1
    clock.now += 10
    assert provider.verified_claims(after)["sub"] == "ada"  # fetched again: the new key
    assert fetched.count("/jwks") == 2
    with pytest.raises(AuthenticationError, match="did not verify"):
        provider.verified_claims(before)  # signed with the withdrawn key
    for _ in range(20):  # a flood of tokens the keys do not verify: no further fetches
        with pytest.raises(AuthenticationError):
            provider.verified_claims(before)
    assert fetched.count("/jwks") == 2


def test_tampered_and_foreign_tokens_are_refused(issuer):
    provider = HttpOpenIdProvider(issuer.url)
    genuine = access_token(issuer, "ada", resource=RESOURCE)
    head, body, signature = genuine.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    changed = base64.urlsafe_b64encode(json.dumps(claims | {"sub": "admin"}).encode())
    with pytest.raises(AuthenticationError, match="did not verify"):
        provider.verified_claims(f"{head}.{changed.rstrip(b'=').decode()}.{signature}")

    foreign = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    fresh = claims | {"exp": int(time.time()) + 300}
    with pytest.raises(AuthenticationError, match="did not verify"):
        provider.verified_claims(jwt.encode(fresh, foreign, algorithm="RS256"))
    with pytest.raises(AuthenticationError, match="not signed by a key of the issuer"):
        provider.verified_claims(jwt.encode(fresh, foreign, algorithm="RS256",
                                            headers={"kid": "made-up"}))  # fmt: skip

    # the issuer's public key as an HMAC secret (algorithm confusion), and no signature at all
    public = httpx.get(issuer.metadata()["jwks_uri"]).json()["keys"][0]["n"].encode()
    confused = jwt.encode(fresh, public * 2, algorithm="HS256")
    with pytest.raises(AuthenticationError, match="'HS256' is not accepted"):
        provider.verified_claims(confused)
    none = base64.urlsafe_b64encode(b'{"alg":"none"}').decode().rstrip("=")
    unsigned = f"{none}.{body}."
    with pytest.raises(AuthenticationError, match="'none' is not accepted"):
        provider.verified_claims(unsigned)


def test_an_expired_token_is_refused_past_the_clock_skew(issuer):
    provider = HttpOpenIdProvider(issuer.url)
    issuer.access_token_seconds = -30  # within the 60 s of skew allowed: still taken
    assert provider.verified_claims(access_token(issuer, "ada", resource=RESOURCE))
    issuer.access_token_seconds = -120
    with pytest.raises(AuthenticationError, match="expired"):
        provider.verified_claims(access_token(issuer, "ada", resource=RESOURCE))


def test_the_discovery_document_must_name_the_configured_issuer(issuer):
    # configured as 127.0.0.1, the server answers as localhost (its issuer follows the Host)
    other_name = issuer.url.replace("localhost", "127.0.0.1")
    as_localhost = httpx.Client(timeout=10, headers={"Host": f"localhost:{issuer.port}"})
    provider = HttpOpenIdProvider(other_name, http=as_localhost)
    with pytest.raises(ServiceUnavailableError, match="names another issuer"):
        provider.verified_claims(access_token(issuer, "ada", resource=RESOURCE))


def test_the_code_flow_gives_an_id_token_that_verifies_and_a_tampered_one_does_not(issuer):
    provider = HttpOpenIdProvider(issuer.url, client_id="web", client_secret="web-secret")
    callback = "http://127.0.0.1:1/cb"
    issuer.set_person("ada", preferred_username="ada", groups=["eng"])
    url = provider.authorization_url({
        "response_type": "code", "client_id": "web", "scope": "openid profile",
        "redirect_uri": callback, "state": "s", "nonce": "n-1",
    })  # fmt: skip
    with httpx.Client(timeout=30) as browser:
        code = query(submit_login_form(browser, url, "ada"))["code"]
    answer = provider.redeem_code(code=code, redirect_uri=callback, code_verifier="v" * 43)
    claims = provider.verified_claims(answer["id_token"])
    assert claims["aud"] == ["web"] and claims["nonce"] == "n-1"
    assert claims["preferred_username"] == "ada" and claims["groups"] == ["eng"]
    with pytest.raises(AuthenticationError, match="refused the sign-in \\(invalid_grant\\)"):
        provider.redeem_code(code=code, redirect_uri=callback, code_verifier="v" * 43)  # reused
    head, body, signature = answer["id_token"].split(".")
    forged = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))) | {"sub": "bob"}
    body = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    with pytest.raises(AuthenticationError, match="did not verify"):
        provider.verified_claims(f"{head}.{body}.{signature}")
