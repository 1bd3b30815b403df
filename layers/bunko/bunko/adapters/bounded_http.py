"""The HTTP client of calls to model endpoints that users configure: whatever the endpoint
answers, Bunko reads a bounded amount of it, for a bounded time, from the host it named.

- A redirect is not followed but refused: an endpoint cannot send the request, with its API
  key, on to another address (the server's loopback, instance metadata).
- A successful answer is cut off past `max_bytes`, counted after decompression: gzip and
  deflate are inflated here, piece by piece, and no other encoding is asked for or taken,
  so a small compressed answer cannot unfold into a large one.
- An error answer is read up to ERROR_BYTES (its message); the rest is dropped.
- The whole answer arrives within `max_seconds` of the request; the client's timeout bounds
  each wait (connect, one read), not their sum.
- `guard(url)` runs before every request: the address check where the host resolves now.
- Behind a proxy, a request goes through the one the environment names for its URL
  (`proxy_for`); the guard checks the endpoint's URL all the same.

The openai SDK takes this client as its `http_client`; HttpRerank uses it directly.
"""

from __future__ import annotations

import functools
import ssl
import time
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import httpx

from bunko.adapters.outbound_limits import ERROR_BYTES
from bunko.errors import UpstreamError

_ENCODINGS = ("identity", "gzip", "deflate")
_PIECE = 64 * 1024


@functools.cache
def verified_tls() -> ssl.SSLContext:
    """One verifying TLS context for the process: httpx otherwise builds one per client,
    loading the CA bundle each time (~29 ms of CPU), and a client is built per model call."""
    return httpx.create_ssl_context()


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for `url`, None to go direct: the scheme's own
    (HTTPS_PROXY for https://, HTTP_PROXY for http://), else ALL_PROXY, in either case,
    unless NO_PROXY lists the host (names, or `*`). httpx's own clients take the same
    variables; a client given its own transport (as here) or dulwich's does not."""
    proxies = urllib.request.getproxies_environment()
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(parts.netloc, proxies):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


class RefusedAnswer(UpstreamError, ValueError):
    """A model endpoint's answer broke a bound: too big, too slow, redirected or malformed.
    Not worth retrying: the same endpoint answers the same way."""


def bounded_client(
    *,
    max_bytes: int,
    max_seconds: float,
    timeout: float,
    guard: Callable[[str], object] | None = None,
) -> httpx.Client:
    """An httpx client whose every answer is bounded as this module says."""
    hooks = {"request": [lambda request: guard(str(request.url))]} if guard else {}
    return httpx.Client(
        transport=BoundedTransport(max_bytes=max_bytes, max_seconds=max_seconds),
        timeout=timeout,
        follow_redirects=False,
        event_hooks=hooks,
    )


def read_capped(pieces: Iterator[bytes], limit: int, too_large: Callable[[bytes], str]) -> bytes:
    """The bytes of `pieces`, or RefusedAnswer(too_large(what was read)) once they pass
    `limit`: a caller's tighter bound for one answer (the transport's holds for all)."""
    body = bytearray()
    for piece in pieces:
        body += piece
        if len(body) > limit:
            raise RefusedAnswer(too_large(bytes(body[:limit])))
    return bytes(body)


class BoundedTransport(httpx.BaseTransport):
    def __init__(
        self, *, max_bytes: int, max_seconds: float, inner: httpx.BaseTransport | None = None
    ) -> None:
        self.max_bytes = max_bytes
        self.max_seconds = max_seconds
        self._given = inner
        self._direct = inner or httpx.HTTPTransport(verify=verified_tls())
        self._proxied: dict[str, httpx.HTTPTransport] = {}

    def _transport(self, url: str) -> httpx.BaseTransport:
        """The given transport, or a direct one, or one through the environment's proxy."""
        proxy = None if self._given is not None else proxy_for(url)
        if proxy is None:
            return self._direct
        if proxy not in self._proxied:
            self._proxied[proxy] = httpx.HTTPTransport(verify=verified_tls(), proxy=proxy)
        return self._proxied[proxy]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = "gzip, deflate"
        started = time.monotonic()
        response = self._transport(str(request.url)).handle_request(request)
        host, status = request.url.host, response.status_code
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if 300 <= status < 400 or encoding not in _ENCODINGS:
            response.close()
            if encoding not in _ENCODINGS:
                raise RefusedAnswer(f"{host} answered in an encoding not asked for ({encoding})")
            location = response.headers.get("location", "")
            raise RefusedAnswer(
                f"{host} answered a redirect ({status}) to {location[:200]!r}; redirects are "
                "not followed: set the model config's baseUrl to where the endpoint is"
            )
        headers = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in ("content-encoding", "content-length")
        ]
        stream = _BoundedStream(
            response.stream,  # type: ignore[arg-type]
            encoding=encoding,
            limit=ERROR_BYTES if status >= 400 else self.max_bytes,
            truncate=status >= 400,
            deadline=started + self.max_seconds,
            describe=f"{host}'s answer",
            seconds=self.max_seconds,
        )
        return httpx.Response(
            status, headers=headers, stream=stream, extensions=response.extensions
        )

    def close(self) -> None:
        for transport in [self._direct, *self._proxied.values()]:
            transport.close()


class _BoundedStream(httpx.SyncByteStream):
    def __init__(
        self,
        raw: httpx.SyncByteStream,
        *,
        encoding: str,
        limit: int,
        truncate: bool,
        deadline: float,
        describe: str,
        seconds: float,
    ) -> None:
        self.raw = raw
        self.encoding = encoding
        self.limit = limit
        self.truncate = truncate
        self.deadline = deadline
        self.describe = describe
        self.seconds = seconds

    def __iter__(self) -> Iterator[bytes]:
        count = 0
        for piece in self._decoded():
            if time.monotonic() > self.deadline:
                raise RefusedAnswer(f"{self.describe} took longer than {self.seconds:g} s; cut off")
            count += len(piece)
            if count > self.limit:
                if self.truncate:
                    yield piece[: len(piece) - (count - self.limit)]
                    return
                raise RefusedAnswer(f"{self.describe} passed {self.limit:,} bytes; cut off")
            yield piece

    def _decoded(self) -> Iterator[bytes]:
        if self.encoding == "identity":
            yield from self.raw
            return
        inflater = zlib.decompressobj(32 + zlib.MAX_WBITS)  # a gzip or a zlib header
        try:
            for piece in self.raw:
                while piece:  # at most _PIECE bytes out at a time, whatever the ratio
                    out = inflater.decompress(piece, _PIECE)
                    piece = inflater.unconsumed_tail
                    if out:
                        yield out
            yield inflater.flush()
        except zlib.error as exc:
            raise RefusedAnswer(f"{self.describe} could not be inflated ({exc})") from exc

    def close(self) -> None:
        self.raw.close()
