"""Confluence's REST APIs as the Confluence connector reads them (services/sources/
confluence.py runs the sync): Cloud through REST v2 (`…/wiki/api/v2`: the space's id from its
key, its pages, a page's body, a page's attachments), Data Center through REST v1
(`/rest/api/space/{key}/content/page`, `/rest/api/content/{id}`, its child attachments).

Both page with a relative `_links.next` (a cursor on Cloud, `start` on Data Center; the
`Link` header's `rel="next"` too), read here one way: Cloud's link starts with the site's
`/wiki`, Data Center's is relative to its context path. No link off the site's origin is
followed, so the credential is never sent elsewhere.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from bunko.errors import BunkoError, UpstreamError
from bunko.parsing.html import parse_html
from bunko.services.sources.api import ApiClient, CredentialRejected, json_object

_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)
_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
_LISTING_PAGES = 10_000  # listing requests in one sync: a loop guard, far past any space
CLOUD_LIMIT = 250  # v2's most per request (getPagesInSpace, getPageAttachments)
DC_LIMIT = 100


def edition_of(url: str) -> str:
    """`cloud` for an Atlassian-hosted site (*.atlassian.net), else `datacenter`."""
    host = (urlsplit(url).hostname or "").lower()
    return "cloud" if host.endswith(".atlassian.net") else "datacenter"


def site_base(url: str, edition: str) -> str:
    """The site's base URL, no trailing slash: a Cloud site's is its `/wiki`."""
    base = url.strip().rstrip("/")
    if edition == "cloud" and not urlsplit(base).path:
        base += "/wiki"
    return base


def auth_headers(credential: str | None) -> dict[str, str]:
    """`EMAIL:API_TOKEN` (Cloud) or `USER:PASSWORD` → Basic; a token alone (a Data Center
    personal access token) → Bearer; none → anonymous (a space open to anyone)."""
    if not credential:
        return {}
    if ":" in credential:
        token = base64.b64encode(credential.encode("utf-8")).decode("ascii")
        return {"Authorization": f"Basic {token}"}
    return {"Authorization": f"Bearer {credential}"}


def storage_text(title: str, storage: str) -> bytes:
    """A page's storage-format XHTML as the library keeps it: its title as a heading, then
    the text the HTML parser every door uses reads from it (CDATA, where code and plain-text
    macros keep their text, read as text)."""
    markup = _CDATA.sub(lambda m: escape(m.group(1)), storage)
    wrapped = f"<html><head><title></title></head><body>{markup}</body></html>"
    try:
        text = parse_html(wrapped.encode("utf-8"), "utf-8").text
    except BunkoError:
        text = ""  # a page without text: its title alone
    return f"# {title}\n\n{text}".strip().encode("utf-8") + b"\n"


@dataclass
class Item:
    """A page or an attachment as a listing shows it."""

    id: str
    title: str
    version: int
    url: str  # a page: its body's API URL; an attachment: its download URL
    web: str | None = None  # a page's address in the browser
    page: str | None = None  # an attachment's page
    media_type: str | None = None
    size: int | None = None


class ConfluenceApi:
    def __init__(
        self,
        settings: dict[str, Any],
        client: ApiClient,
        *,
        out_of_time: Callable[[], bool],
    ) -> None:
        """`settings`: the source's (url, space, edition); `out_of_time`: whether the run's
        time is up (a listing that outlives it fails)."""
        self.settings = settings
        self.edition = settings.get("edition") or edition_of(settings["url"])
        self.base = site_base(settings["url"], self.edition)
        parts = urlsplit(self.base)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.client = client
        self.out_of_time = out_of_time

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> str | None:
        """The next page of a listing: `_links.next` (or the Link header), relative to the
        site (Data Center: to its context path; Cloud's starts with `/wiki` itself)."""
        link = (body.get("_links") or {}).get("next")
        if not link:
            found = _LINK_NEXT.search(headers.get("link", ""))
            link = found.group(1) if found else None
        if not link:
            return None
        context = urlsplit(self.base).path.rstrip("/")
        if link.startswith(("http://", "https://")):
            url = link
        elif context and link.startswith(context + "/"):
            url = self.origin + link
        else:
            url = self.base + link
        return self.on_site(url)

    def on_site(self, url: str) -> str:
        """A URL the service named, refused unless on the source's own site (origin)."""
        if not url.startswith(self.origin + "/"):
            raise UpstreamError(f"{url}: not on {self.origin}; not followed")
        return url

    def _listing(self, url: str) -> Iterator[dict[str, Any]]:
        """Every result of a paged listing."""
        for _ in range(_LISTING_PAGES):
            answer = self.client.get(
                url, max_bytes=20_000_000, headers={"Accept": "application/json"}
            )
            body = json_object(url, answer.body)
            results = body.get("results")
            if not isinstance(results, list):
                raise UpstreamError(f"{url}: a listing without results")
            yield from (r for r in results if isinstance(r, dict))
            nxt = self._next(body, dict(answer.headers))
            if nxt is None:
                return
            if self.out_of_time():
                raise UpstreamError("the listing took longer than max_seconds")
            url = nxt
        raise UpstreamError(f"{url}: more than {_LISTING_PAGES:,} listing pages")

    # -- the editions' shapes -------------------------------------------------------------

    def list_pages(self) -> list[Item]:
        """Every current page of the space, with its version number (no body)."""
        key = quote(self.settings["space"], safe="~")
        if self.edition == "cloud":
            url = f"{self.base}/api/v2/spaces?keys={key}"
            spaces = [s for s in self._listing(url) if s.get("key") == self.settings["space"]]
            if not spaces:
                raise UpstreamError(f"no space {self.settings['space']!r} this credential sees")
            space_id = str(spaces[0]["id"])
            url = f"{self.base}/api/v2/spaces/{space_id}/pages?status=current&limit={CLOUD_LIMIT}"
            return [
                Item(
                    id=str(p["id"]),
                    title=str(p.get("title") or ""),
                    version=_number(p),
                    url=f"{self.base}/api/v2/pages/{p['id']}?body-format=storage",
                    web=_web(self.base, p),
                )
                for p in self._listing(url)
            ]
        if "Authorization" in self.client.headers:
            # Data Center serves a wrong or expired personal access token as an anonymous
            # visitor instead of refusing it (CONFSERVER-98199): its listing would be what
            # anyone sees, and the mirror would delete the rest.
            who = f"{self.base}/rest/api/user/current"
            me = json_object(who, self.client.get(who, max_bytes=1_000_000).body)
            if me.get("type") == "anonymous":
                raise CredentialRejected("Data Center took the credential as an anonymous visitor")
        url = f"{self.base}/rest/api/space/{key}/content/page?limit={DC_LIMIT}&expand=version"
        return [
            Item(
                id=str(p["id"]),
                title=str(p.get("title") or ""),
                version=_number(p),
                url=f"{self.base}/rest/api/content/{p['id']}?expand=body.storage,version",
                web=_web(self.base, p),
            )
            for p in self._listing(url)
            if p.get("type", "page") == "page"
        ]

    def list_files(self, page: Item) -> list[Item]:
        """The page's attachments (every type; the connector keeps those Bunko reads)."""
        if self.edition == "cloud":
            url = f"{self.base}/api/v2/pages/{page.id}/attachments?limit={CLOUD_LIMIT}"
        else:
            url = f"{self.base}/rest/api/content/{page.id}/child/attachment?limit={DC_LIMIT}&expand=version"
        items = []
        for a in self._listing(url):
            ext = a.get("extensions") or {}
            link = a.get("downloadLink") or (a.get("_links") or {}).get("download")
            if not link:
                continue
            items.append(
                Item(
                    id=str(a["id"]),
                    title=str(a.get("title") or ""),
                    version=_number(a),
                    url=self.on_site(urljoin(self.base + "/", link.lstrip("/"))),
                    page=page.id,
                    media_type=a.get("mediaType")
                    or (a.get("metadata") or {}).get("mediaType")
                    or ext.get("mediaType"),
                    size=a.get("fileSize") or ext.get("fileSize"),
                )
            )
        return items

    def read_page(self, page: Item, *, max_bytes: int) -> bytes:
        """The page's text (its title a heading); Gone when it was deleted meanwhile."""
        body = json_object(page.url, self.client.get(page.url, max_bytes=max_bytes).body)
        storage = ((body.get("body") or {}).get("storage") or {}).get("value")
        if not isinstance(storage, str):
            raise UpstreamError(f"{page.url}: no storage body")
        return storage_text(str(body.get("title") or page.title), storage)


def _number(item: dict[str, Any]) -> int:
    version = item.get("version") or {}
    number = version.get("number") if isinstance(version, dict) else None
    return number if isinstance(number, int) else -1


def _web(base: str, item: dict[str, Any]) -> str | None:
    web = (item.get("_links") or {}).get("webui")
    return base + web if isinstance(web, str) and web.startswith("/") else None
