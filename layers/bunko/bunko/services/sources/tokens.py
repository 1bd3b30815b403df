"""A cloud drive's access token, from the credential its source keeps.

The credential is one of:
- an access token, used as it is (it expires: Graph's and Google's last about an hour);
- for `sharepoint`, an app registration's client credentials, as JSON
  `{"tenant_id", "client_id", "client_secret"}` (and `"authority"`, by default
  https://login.microsoftonline.com): the Microsoft identity platform's client credentials
  flow, a POST to `{authority}/{tenant_id}/oauth2/v2.0/token` with
  `grant_type=client_credentials` and `scope={Graph's root}/.default`;
- for `gdrive`, a service account's JSON key (`"type": "service_account"`): a JWT signed
  with its private key (RS256; `iss` its `client_email`, `scope` drive.readonly, `aud` its
  `token_uri`), exchanged at `token_uri` with
  `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (Google's "Using OAuth 2.0 for
  Server to Server Applications"). The folder must be shared with the service account.

A token is asked for at the start of each sync, through the guarded fetcher (the token
endpoint passes the outbound guard as every other URL). The endpoint's 400 or 401 is the
credential refused: the sync fails before its mirror and deletes nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

from bunko.errors import UpstreamError
from bunko.ports.sources import WebFetcher
from bunko.services.sources.api import CredentialRejected
from bunko.services.sources.records import SyncReport

MICROSOFT = "https://login.microsoftonline.com"
DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.readonly"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_TOKEN_BYTES = 1_000_000


def _json_credential(credential: str) -> dict[str, Any] | None:
    if not credential.lstrip().startswith("{"):
        return None
    try:
        found = json.loads(credential)
    except ValueError as exc:
        raise CredentialRejected(f"the credential is not valid JSON: {exc.msg}") from None
    if not isinstance(found, dict):
        raise CredentialRejected("the credential's JSON is not an object")
    return found


def _need(found: dict[str, Any], *keys: str) -> list[str]:
    missing = [k for k in keys if not isinstance(found.get(k), str) or not found[k]]
    if missing:
        raise CredentialRejected(f"the credential's JSON lacks {', '.join(missing)}")
    return [found[k] for k in keys]


def access_token(
    kind: str,
    credential: str,
    settings: dict[str, Any],
    fetcher: WebFetcher,
    report: SyncReport,
    *,
    allow_private: bool,
    now: Callable[[], float] = time.time,
) -> str:
    """The bearer token a sync of this source sends."""
    found = _json_credential(credential)
    if found is None:
        return credential.strip()
    if kind == "sharepoint":
        tenant, client, secret = _need(found, "tenant_id", "client_id", "client_secret")
        authority = str(found.get("authority") or MICROSOFT).rstrip("/")
        root = urlsplit(settings["url"])
        form = {
            "client_id": client,
            "client_secret": secret,
            "scope": f"{root.scheme}://{root.netloc}/.default",
            "grant_type": "client_credentials",
        }
        url = f"{authority}/{quote(tenant, safe='')}/oauth2/v2.0/token"
    elif kind == "gdrive":
        if found.get("type") != "service_account":
            raise CredentialRejected("a JSON credential for Google Drive is a service account key")
        email, key, token_uri = _need(found, "client_email", "private_key", "token_uri")
        import jwt  # PyJWT (with cryptography for RS256), as the OpenID sign-in uses

        issued = int(now())
        claims = {
            "iss": email,
            "scope": DRIVE_SCOPE,
            "aud": token_uri,
            "iat": issued,
            "exp": issued + 3600,
        }
        try:
            assertion = jwt.encode(claims, key, algorithm="RS256")
        except (ValueError, TypeError, jwt.PyJWTError) as exc:
            raise CredentialRejected(f"the service account's private key: {exc}") from None
        form = {"grant_type": JWT_BEARER, "assertion": assertion}
        url = token_uri
    else:
        raise CredentialRejected(f"a {kind} source takes no JSON credential")
    report.requests += 1
    answer = fetcher.post_form(url, form, max_bytes=_TOKEN_BYTES, allow_private=allow_private)
    if answer.status in (400, 401):
        said = answer.body[:200].decode("utf-8", "replace")
        raise CredentialRejected(
            f"the token endpoint answered {answer.status}: {said}", answer.status
        )
    if answer.status != 200:
        raise UpstreamError(f"the token endpoint answered {answer.status}")
    try:
        token = json.loads(answer.body).get("access_token")
    except (ValueError, AttributeError):
        token = None
    if not isinstance(token, str) or not token:
        raise UpstreamError("the token endpoint answered no access_token")
    return token
