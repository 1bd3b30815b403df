"""What every API connector (Confluence, SharePoint, Google Drive) asks a service with: a GET
through the guarded WebFetcher port (the outbound guard runs before each request), in the
source's name (an Authorization header made from its credential), that waits out throttling
and tells a rejected credential from any other failure.

- 429 and 503 are waited out as `Retry-After` says (seconds or an HTTP date), or 1, 2, 4 …
  seconds without one; each wait is capped, and so are the waits of one run, through an
  injectable `sleep` (tests do not sleep). Past a cap the request fails (UpstreamError).
- 401 and 403 raise CredentialRejected (a 403 the connector tells is a rate limit is waited
  out as a 429): the connector ends the sync with
  `failed = "credential rejected/expired: …"` before its mirror, so nothing is deleted.
- 404 and 410 raise Gone (unless the caller `accept`s them); any other answer outside 2xx
  (and 304) UpstreamError.

A listing that fails for any reason must end the sync before the mirror: a listing cut short
read as "the service has nothing" would delete the library's copy.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from bunko.errors import BunkoError, UpstreamError
from bunko.ports.sources import WebAnswer, WebFetcher
from bunko.services.sources.records import SyncReport

_THROTTLED = (429, 503)
_REJECTED = (401, 403)
JSON_BYTES = 20_000_000  # one page of a listing


class CredentialRejected(BunkoError):
    """The service refused the source's credential (401/403): the whole sync fails."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.http_status = status  # the refusing answer's, when a request was refused


class Gone(UpstreamError):
    """404 or 410: what was asked for is not there (any more)."""


def credential_failure(exc: CredentialRejected) -> str:
    """What a sync's `failed` says for it (the source's last sync shows it)."""
    return f"credential rejected/expired: {exc}"


def retry_after(value: str | None, *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds a `Retry-After` asks for (RFC 9110: seconds, or an HTTP date); None if absent
    or unreadable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


class ApiClient:
    def __init__(
        self,
        fetcher: WebFetcher,
        report: SyncReport,
        *,
        allow_private: bool,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        retries: int = 4,
        max_wait: float = 120.0,
        max_waited: float = 600.0,
        rate_limited: Callable[[WebAnswer], bool] | None = None,
    ) -> None:
        """`headers`: sent with every request (the Authorization the credential makes);
        `retries`: throttled answers waited out per request; `max_wait`: the longest one
        wait; `max_waited`: all the waits of this client (one sync); `rate_limited`: a 403
        that is the service's rate limit, not a refusal (Google Drive's
        `rateLimitExceeded`), waited out as a 429 is."""
        self.fetcher = fetcher
        self.report = report
        self.allow_private = allow_private
        self.headers = dict(headers or {})
        self.sleep = sleep
        self.retries = retries
        self.max_wait = max_wait
        self.max_waited = max_waited
        self.waited = 0.0
        self.rate_limited = rate_limited

    def get(
        self,
        url: str,
        *,
        max_bytes: int,
        headers: Mapping[str, str] | None = None,
        accept: Collection[int] = (),
        anonymous: bool = False,
    ) -> WebAnswer:
        """GET `url`: the 2xx or 304 answer, once throttling is waited out. Redirects come
        back as they are (an API answers none a connector should follow blindly). `accept`:
        other statuses the caller reads itself (Graph's 302 to a download, its 410 Gone);
        `anonymous`: without the credential's headers (a pre-authenticated download URL,
        maybe on another host, must not receive the credential)."""
        sent = {**({} if anonymous else self.headers), **(headers or {})}
        for attempt in range(self.retries + 1):
            self.report.requests += 1
            answer = self.fetcher.get(
                url, sent, max_bytes=max_bytes, allow_private=self.allow_private
            )
            self.report.bytes += len(answer.body)
            throttled = answer.status in _THROTTLED or (
                answer.status == 403 and self.rate_limited is not None and self.rate_limited(answer)
            )
            if answer.status in _REJECTED and not throttled:
                said = f"{url} answered {answer.status}{_said(answer)}"
                raise CredentialRejected(said, answer.status)
            if not throttled:
                if answer.status in accept:
                    return answer
                if answer.status in (404, 410):
                    raise Gone(f"{url} answered {answer.status}{_said(answer)}")
                if not (200 <= answer.status < 300 or answer.status == 304):
                    raise UpstreamError(f"{url} answered {answer.status}{_said(answer)}")
                return answer
            self.report.throttled += 1
            if attempt == self.retries:
                break
            wait = retry_after(answer.headers.get("retry-after"))
            wait = float(2**attempt) if wait is None else wait
            if wait > self.max_wait or self.waited + wait > self.max_waited:
                raise UpstreamError(
                    f"{url} answered {answer.status} and asked to wait {wait:.0f} s "
                    f"(at most {self.max_wait:.0f} s a wait, {self.max_waited:.0f} s a sync)"
                )
            self.waited += wait
            self.sleep(wait)
        raise UpstreamError(f"{url} still answered {answer.status} after {self.retries} waits")

    def json(self, url: str, *, max_bytes: int = JSON_BYTES) -> Any:
        """GET `url` asking for JSON; the decoded body."""
        answer = self.get(url, max_bytes=max_bytes, headers={"Accept": "application/json"})
        try:
            return json.loads(answer.body)
        except ValueError as exc:
            raise UpstreamError(f"{url} did not answer JSON: {exc}") from exc


def json_object(where: str, body: bytes) -> dict[str, Any]:
    """`body` decoded, a JSON object, or an UpstreamError naming `where` (its URL or path)."""
    try:
        found = json.loads(body)
    except ValueError as exc:
        raise UpstreamError(f"{where} did not answer JSON: {exc}") from exc
    if not isinstance(found, dict):
        raise UpstreamError(f"{where} did not answer a JSON object")
    return found


def _said(answer: WebAnswer) -> str:
    """The start of a refusal's body: services say why there (an expired token, a scope)."""
    text = answer.body[:200].decode("utf-8", "replace").strip()
    return f": {' '.join(text.split())}" if text else ""
