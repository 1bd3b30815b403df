"""Where an outbound model endpoint may point: the deployment's embedding endpoint and
every model config's baseUrl.

A deployment's functions run with a role and beside internal services (instance metadata,
hosts in the VPC); an endpoint URL that resolves inside the network would let the setting
reach them and would send them the endpoint's API key. The URL's form is checked by the
same rule as a model config's baseUrl; its host is then resolved and every address must be
public. An operator who runs the model server in the private network says so with a switch.
Behind a forward proxy (HTTPS_PROXY, ...) the proxy resolves the name: the guard checks what
it can see here (docs/security.md, "Outbound calls to model endpoints").
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from bunko.errors import ValidationError

Resolver = Callable[[str, int], list[str]]
MAX_URL_LENGTH = 2048


def validate_base_url(url: str | None) -> str | None:
    """None/empty, or an absolute http(s) URL with a host (no credentials in it)."""
    if url is None or (isinstance(url, str) and not url.strip()):
        return None
    if not isinstance(url, str):
        raise ValidationError("baseUrl: must be an http:// or https:// URL with a host")
    url = url.strip()
    parts = urlsplit(url)
    if len(url) > MAX_URL_LENGTH or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("baseUrl: must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValidationError("baseUrl: put credentials in apiKey, not in the URL")
    return url


def resolve(host: str, port: int) -> list[str]:
    """Every address the host resolves to (what a client may connect to)."""
    return sorted({info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})


def _ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address as the network sees it: an IPv6 zone dropped, IPv4-mapped unwrapped."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return ip.ipv4_mapped
    return ip


def is_inside_network(address: str) -> bool:
    """Private, loopback, link-local, shared (CGNAT), reserved, unspecified or multicast."""
    ip = _ip(address)
    return not ip.is_global or ip.is_multicast


def check_public_endpoint(
    url: str | None,
    *,
    setting: str,
    allow_switch: str,
    allow_private: bool,
    resolver: Resolver = resolve,
    proxied: bool = False,
) -> str:
    """The URL, or ValidationError naming `setting` (and `allow_switch` when the address is
    inside the network). `proxied`: requests to it go through a forward proxy, which
    resolves the name itself, so a name that does not resolve here is the proxy's to
    resolve; a literal address, and a name that resolves here, are checked all the same."""
    try:
        checked = validate_base_url(url)
    except ValidationError as exc:
        raise ValidationError(f"{setting}: {str(exc).removeprefix('baseUrl: ')}") from exc
    if checked is None:
        raise ValidationError(f"{setting}: required (the endpoint's base URL, e.g. …/v1)")
    if allow_private:
        return checked
    parts = urlsplit(checked)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = resolver(host, port)
    except (OSError, UnicodeError, ValueError) as exc:
        if proxied:
            return checked
        raise ValidationError(f"{setting}: cannot resolve {host!r} ({exc})") from exc
    if proxied and not addresses:
        return checked
    inside = [a for a in addresses if is_inside_network(a)]
    if inside or not addresses:
        where = inside[0] if inside else "no address"
        raise ValidationError(
            f"{setting}: {host!r} resolves to {where}, inside the network (private, loopback, "
            "link-local or reserved); such endpoints are refused so that a setting cannot "
            f"reach internal services. To use a private endpoint deliberately, set "
            f"{allow_switch}=true"
        )
    return checked


def check_model_endpoint(url: str, *, allow_private: bool, resolver: Resolver = resolve) -> str:
    """A model config's baseUrl, or ValidationError. Link-local addresses (cloud instance
    metadata at 169.254.169.254, fe80::) are always refused; loopback and private ones only
    when `allow_private` is False. The host is resolved here even when the request goes
    through a forward proxy (which resolves it again, itself): a literal address and a name
    that resolves inside the network here are refused either way; a name that does not
    resolve here passes, to the proxy (or to a connection that fails)."""
    checked = validate_base_url(url)
    if checked is None:
        raise ValidationError("baseUrl: must be an http:// or https:// URL with a host")
    parts = urlsplit(checked)
    host = parts.hostname or ""
    try:
        addresses = resolver(host, parts.port or (443 if parts.scheme == "https" else 80))
    except (OSError, UnicodeError, ValueError):
        # Points nowhere now (offline, a name not yet in DNS): nothing to reach. The check
        # runs again each time the config is used.
        addresses = []
    for address in addresses:
        ip = _ip(address)
        if ip.is_link_local or (not allow_private and is_inside_network(address)):
            raise ValidationError(
                f"baseUrl: {host!r} resolves to {address}, inside the network "
                f"({'link-local: instance metadata' if ip.is_link_local else 'private or loopback'}"
                "); model endpoints there are refused so that a model config cannot reach "
                "internal services"
            )
    return checked


def check_outbound_url(
    url: str, *, what: str, allow_private: bool, resolver: Resolver = resolve
) -> str:
    """A URL a source fetches (a website's page, a Git remote), checked by the rule of model
    configs' base URLs: http(s) with a host and no credentials; link-local addresses
    (instance metadata) always refused, loopback and private ones unless `allow_private`.
    Run before every request, so a redirect or a link cannot lead inside the network."""
    parts = urlsplit(url or "")
    if (
        len(url or "") > MAX_URL_LENGTH
        or parts.scheme not in ("http", "https")
        or not parts.hostname
    ):
        raise ValidationError(f"{what}: must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValidationError(f"{what}: credentials do not belong in the URL")
    host = parts.hostname
    try:
        addresses = resolver(host, parts.port or (443 if parts.scheme == "https" else 80))
    except (OSError, UnicodeError, ValueError) as exc:
        raise ValidationError(f"{what}: cannot resolve {host!r} ({exc})") from exc
    for address in addresses:
        ip = _ip(address)
        if ip.is_link_local or (not allow_private and is_inside_network(address)):
            raise ValidationError(
                f"{what}: {host!r} resolves to {address}, inside the network; sources there "
                "are refused so that a setting cannot reach internal services"
            )
    return url
