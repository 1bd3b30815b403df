"""HttpWebFetcher: a connector's GETs (and an OAuth token endpoint's POST). Every request
passes the outbound guard first (the one model endpoints pass: no instance metadata, no private network unless allowed);
redirects come back as they are (the connector follows same-site ones, each guarded again);
an answer is read up to the caller's bound, in pieces, and cut off past it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx

from bunko.errors import UpstreamError
from bunko.ports.sources import WebAnswer

USER_AGENT = "BunkoBot/1.0 (+https://github.com/bunko; a knowledge base's website source)"


class HttpWebFetcher:
    def __init__(self, guard: Callable[[str, bool], object], *, timeout: float = 20.0) -> None:
        self.guard = guard
        self.client = httpx.Client(
            timeout=timeout, follow_redirects=False, headers={"User-Agent": USER_AGENT}
        )

    def get(
        self, url: str, headers: Mapping[str, str], *, max_bytes: int, allow_private: bool
    ) -> WebAnswer:
        self.guard(url, allow_private)
        try:
            with self.client.stream("GET", url, headers=dict(headers)) as response:
                body = bytearray()
                for piece in response.iter_bytes():
                    body += piece
                    if len(body) > max_bytes:
                        raise UpstreamError(f"{url} passed {max_bytes:,} bytes; not read")
                found = {k.lower(): v for k, v in response.headers.items()}
                return WebAnswer(response.status_code, found, bytes(body))
        except httpx.HTTPError as exc:
            raise UpstreamError(f"{url}: {type(exc).__name__}: {exc}") from exc

    def post_form(
        self, url: str, form: Mapping[str, str], *, max_bytes: int, allow_private: bool
    ) -> WebAnswer:
        self.guard(url, allow_private)
        try:
            response = self.client.post(url, data=dict(form))
        except httpx.HTTPError as exc:
            raise UpstreamError(f"{url}: {type(exc).__name__}: {exc}") from exc
        if len(response.content) > max_bytes:
            raise UpstreamError(f"{url} passed {max_bytes:,} bytes; not read")
        found = {k.lower(): v for k, v in response.headers.items()}
        return WebAnswer(response.status_code, found, response.content)

    def close(self) -> None:
        self.client.close()
