"""HttpOpenIdProvider: an OpenID Connect issuer over HTTPS (httpx), its tokens checked with
PyJWT against the keys it publishes (JWKS).

- The discovery document (<issuer>/.well-known/openid-configuration) must name the issuer
  exactly as configured (OpenID Connect Discovery §4.3), and is kept for an hour.
- Keys: a token naming a key id not in the cached set fetches the set again (the issuer
  rotated its keys), at most once per `refresh_cooldown` seconds, so tokens with made-up key
  ids cannot make this server hammer the issuer. A token with no key id is checked with the
  set's only signing key (an issuer with one key may leave `kid` out).
- Only asymmetric algorithms are accepted (never `none` or an HMAC, which would let the
  public key act as a shared secret), and a key is used only with its own key type.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import httpx
import jwt

from bunko.errors import AuthenticationError, ServiceUnavailableError

ASYMMETRIC = frozenset(
    {
        "RS256",
        "RS384",
        "RS512",
        "PS256",
        "PS384",
        "PS512",
        "ES256",
        "ES384",
        "ES512",
        "EdDSA",
    }
)
LEEWAY_SECONDS = 60  # clocks here and at the issuer may differ this much
DISCOVERY_TTL_SECONDS = 3600
MAX_DOCUMENT_BYTES = 1024 * 1024  # a discovery document, a key set or a token answer
UNREACHABLE = "the identity provider could not be reached; try again later"


class HttpOpenIdProvider:
    def __init__(
        self,
        issuer: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        http: httpx.Client | None = None,
        refresh_cooldown: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer.rstrip("/")
        self.client_id = client_id
        self._secret = client_secret
        self._http = http or httpx.Client(timeout=10.0, follow_redirects=False)
        self._cooldown = refresh_cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._discovery: dict[str, Any] | None = None
        self._discovered_at = 0.0
        self._keys: list[jwt.PyJWK] = []
        self._keys_at: float | None = None

    # -- the authorization code flow ----------------------------------------------------

    def authorization_url(self, params: dict[str, str]) -> str:
        endpoint = self._endpoint("authorization_endpoint")
        return endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)

    def redeem_code(self, *, code: str, redirect_uri: str, code_verifier: str) -> dict[str, Any]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": code_verifier,
        }
        auth = None
        methods = self._metadata().get("token_endpoint_auth_methods_supported")
        if self._secret is None:
            form["client_id"] = self.client_id or ""  # a public client: PKCE alone
        elif methods and "client_secret_basic" not in methods and "client_secret_post" in methods:
            form |= {"client_id": self.client_id or "", "client_secret": self._secret}
        else:  # the default method (OAuth 2.0 §2.3.1)
            auth = httpx.BasicAuth(self.client_id or "", self._secret)
        try:
            response = self._http.post(
                self._endpoint("token_endpoint"),
                data=form,
                auth=auth,
                headers={"Accept": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise ServiceUnavailableError(UNREACHABLE) from exc
        body = _json(response.content)
        if response.status_code >= 500 or body is None:
            raise ServiceUnavailableError(UNREACHABLE)
        if response.status_code != 200:
            error = str(body.get("error", "error"))[:64]
            raise AuthenticationError(f"the identity provider refused the sign-in ({error})")
        return body

    # -- tokens -------------------------------------------------------------------------

    def verified_claims(self, token: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise AuthenticationError("the token is not a JWT") from exc
        algorithm = header.get("alg")
        if algorithm not in ASYMMETRIC:
            raise AuthenticationError(f"the token's algorithm {algorithm!r} is not accepted")
        kid = header.get("kid")
        key = self._key(kid)
        try:
            return _decode(token, key, algorithm, self.issuer)
        except jwt.InvalidSignatureError as exc:
            # Without a key id, the one key held may be the one the issuer just replaced.
            fresh = self._key(kid, stale=key) if kid is None else key
            if fresh is not key:
                try:
                    return _decode(token, fresh, algorithm, self.issuer)
                except jwt.InvalidSignatureError:
                    pass
            raise AuthenticationError(f"the token did not verify ({exc})") from exc

    def _key(self, kid: str | None, *, stale: jwt.PyJWK | None = None) -> jwt.PyJWK:
        with self._lock:
            if self._keys_at is None:
                self._refresh_keys()
            found = _pick(self._keys, kid)
            cooled = self._clock() - (self._keys_at or 0.0) >= self._cooldown
            if (found is None or found is stale) and cooled:
                self._refresh_keys()  # a key we have not seen: the issuer may have rotated
                found = _pick(self._keys, kid)
        if found is None:
            raise AuthenticationError("the token was not signed by a key of the issuer")
        return found

    def _refresh_keys(self) -> None:
        document = self._get(self._endpoint("jwks_uri"))
        keys = []
        for entry in document.get("keys", []) if isinstance(document, dict) else []:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                keys.append(jwt.PyJWK(entry))
            except jwt.PyJWTError:
                continue  # a key type this server cannot use; the others still count
        self._keys, self._keys_at = keys, self._clock()

    # -- discovery ----------------------------------------------------------------------

    def discovery(self) -> dict[str, Any]:
        return dict(self._metadata())

    def _endpoint(self, name: str) -> str:
        value = self._metadata().get(name)
        if not isinstance(value, str) or not value.startswith(("https://", "http://")):
            raise ServiceUnavailableError(f"the identity provider's discovery names no {name}")
        return value

    def _metadata(self) -> dict[str, Any]:
        fresh = self._clock() - self._discovered_at < DISCOVERY_TTL_SECONDS
        if self._discovery is not None and fresh:
            return self._discovery
        document = self._get(self.issuer + "/.well-known/openid-configuration")
        if document.get("issuer") != self.issuer:
            raise ServiceUnavailableError(
                "the identity provider's discovery names another issuer: check BUNKO_OIDC_ISSUER"
            )
        self._discovery, self._discovered_at = document, self._clock()
        return document

    def _get(self, url: str) -> dict[str, Any]:
        try:
            response = self._http.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise ServiceUnavailableError(UNREACHABLE) from exc
        body = _json(response.content) if response.status_code == 200 else None
        if body is None:
            raise ServiceUnavailableError(UNREACHABLE)
        return body


def _decode(token: str, key: jwt.PyJWK, algorithm: str, issuer: str) -> dict[str, Any]:
    try:
        return jwt.decode(
            token,
            key.key,
            algorithms=[algorithm],
            issuer=issuer,
            leeway=LEEWAY_SECONDS,
            options={"require": ["iss", "sub", "exp", "iat"], "verify_aud": False},
        )
    except jwt.InvalidSignatureError:
        raise
    except jwt.ExpiredSignatureError as exc:
        raise AuthenticationError("the token has expired") from exc
    except (jwt.PyJWTError, ValueError, TypeError) as exc:
        raise AuthenticationError(f"the token did not verify ({exc})") from exc


def _pick(keys: list[jwt.PyJWK], kid: str | None) -> jwt.PyJWK | None:
    if kid is not None:
        return next((k for k in keys if k.key_id == kid), None)
    return keys[0] if len(keys) == 1 else None


def _json(content: bytes) -> dict[str, Any] | None:
    if len(content) > MAX_DOCUMENT_BYTES:
        return None
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
