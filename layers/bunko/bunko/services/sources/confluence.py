"""The Confluence connector: the pages of one space (their storage-format bodies as text) and
their attachments of types Bunko reads, each a document under the source's folder.

Two editions, one code path: Confluence Cloud through REST v2 (`…/wiki/api/v2`: the space's
id from its key, its pages, a page's body, a page's attachments) and Data Center through REST
v1 (`/rest/api/space/{key}/content/page`, `/rest/api/content/{id}`, its child attachments).
Both page with a relative `_links.next` (a cursor on Cloud, `start` on Data Center; the
`Link` header's `rel="next"` too), read here the same way; no link off the site is followed,
so the credential is never sent elsewhere.

Incremental by version: a listing carries each page's `version.number` (and each attachment's),
kept per id; only a page whose number changed has its body fetched. The page id is the
document's identity: a page renamed (its path is its title) keeps its document through the
mirror's `moved`, attachments under it too. A page no longer in the space's listing is not
seen, so the mirror deletes its document; the listing failing in any way (a 401, a 5xx, a
throttle not waited out) ends the sync before the mirror: nothing is deleted.

A page or attachment that fails is recorded against its path and kept as it was; bodies are
fetched within the run's bounds (items, bytes, time), and a run a bound stopped goes on at the
next sync (what it did not reach keeps its old version).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from bunko.errors import BunkoError, UpstreamError
from bunko.parsing.html import parse_html
from bunko.services.sources.api import ApiClient, CredentialRejected, Gone, credential_failure
from bunko.services.sources.records import SourceRecord, SyncReport

_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]+")
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


def safe_name(name: str, fallback: str) -> str:
    """A title as one path segment: no slashes or control characters, at most 200 chars."""
    name = unicodedata.normalize("NFC", _UNSAFE.sub("-", name or "")).strip(" .")
    return name[:200].strip(" .") or fallback


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


@dataclass
class Staged:
    """A page or attachment read this sync, to be written once the mirror has run."""

    kind: str  # "pages" or "files"
    id: str
    version: int
    path: str
    data: bytes
    url: str | None  # a page's address in the browser (its document's `url` metadata)
    page: str | None = None  # an attachment's page


class ConfluenceSync:
    def __init__(
        self,
        record: SourceRecord,
        state: dict[str, Any],
        client: ApiClient,
        report: SyncReport,
        *,
        supported: Callable[[str, str | None], bool],
        max_file_bytes: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        s = record.settings
        self.record = record
        self.settings = s
        self.edition = s.get("edition") or edition_of(s["url"])
        self.base = site_base(s["url"], self.edition)
        parts = urlsplit(self.base)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.state = state
        self.pages: dict[str, dict[str, Any]] = state.setdefault("pages", {})
        self.files: dict[str, dict[str, Any]] = state.setdefault("files", {})
        self.client = client
        self.report = report
        self.supported = supported
        self.max_file_bytes = max_file_bytes
        self.clock = clock
        self.started = clock()
        self.seen: set[str] = set()
        self.moved: dict[str, str] = {}  # new path → old
        self.staged: list[Staged] = []
        self.taken = 0  # bodies and files fetched this run

    # -- paging ---------------------------------------------------------------------------

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
        return self._on_site(url)

    def _on_site(self, url: str) -> str:
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
            body = _json(url, answer.body)
            results = body.get("results")
            if not isinstance(results, list):
                raise UpstreamError(f"{url}: a listing without results")
            yield from (r for r in results if isinstance(r, dict))
            nxt = self._next(body, dict(answer.headers))
            if nxt is None:
                return
            if self.clock() - self.started >= self.settings["max_seconds"]:
                raise UpstreamError("the listing took longer than max_seconds")
            url = nxt
        raise UpstreamError(f"{url}: more than {_LISTING_PAGES:,} listing pages")

    # -- the editions' shapes -------------------------------------------------------------

    def list_pages(self) -> list[Item]:
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
            me = _json(who, self.client.get(who, max_bytes=1_000_000).body)
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
                    url=self._on_site(urljoin(self.base + "/", link.lstrip("/"))),
                    page=page.id,
                    media_type=a.get("mediaType")
                    or (a.get("metadata") or {}).get("mediaType")
                    or ext.get("mediaType"),
                    size=a.get("fileSize") or ext.get("fileSize"),
                )
            )
        return items

    def read_page(self, page: Item) -> bytes:
        body = _json(page.url, self.client.get(page.url, max_bytes=self._left()).body)
        storage = ((body.get("body") or {}).get("storage") or {}).get("value")
        if not isinstance(storage, str):
            raise UpstreamError(f"{page.url}: no storage body")
        return storage_text(str(body.get("title") or page.title), storage)

    # -- a run ----------------------------------------------------------------------------

    def _left(self) -> int:
        return max(1, min(self.max_file_bytes, self.settings["max_bytes"] - self.report.bytes))

    def _bound(self) -> str | None:
        if self.taken >= self.settings["max_pages"]:
            return "max_pages"
        if self.report.bytes >= self.settings["max_bytes"]:
            return "max_bytes"
        if self.clock() - self.started >= self.settings["max_seconds"]:
            return "max_seconds"
        return None

    def _keep(self, kept: dict[str, Any] | None) -> None:
        """Not read this time: what the library has stays as it was."""
        if kept is not None and kept.get("path"):
            self.seen.add(kept["path"])

    def run(self) -> bool:
        """List the space and read what changed: fills `seen`, `moved` and `staged`. False
        (with `report.failed`) when the space cannot be listed: then nothing is mirrored."""
        try:
            pages = self.list_pages()
        except CredentialRejected as exc:
            self.report.failed = credential_failure(exc)
            return False
        except BunkoError as exc:
            self.report.failed = f"listing the space: {exc}"
            return False
        paths = self._page_paths(pages)
        try:
            for page in pages:
                self._page(page, paths[page.id])
            if self.settings["attachments"]:
                for page in pages:
                    self._attachments(page, paths[page.id])
        except CredentialRejected as exc:  # mid-run: the credential no longer holds
            self.report.failed = credential_failure(exc)
            return False
        gone = set(self.pages) - {p.id for p in pages}
        for page_id in gone:
            del self.pages[page_id]
        for file_id in [f for f, v in self.files.items() if v.get("page") in gone]:
            del self.files[file_id]
        return True

    def _page_paths(self, pages: list[Item]) -> dict[str, str]:
        """Each page's path, by its title; two titles that read the same as paths: the later
        id's gets its id too (titles are unique in a space, their path spellings need not be)."""
        folder, taken, out = self.record.folder, set(), {}
        for page in sorted(pages, key=lambda p: (len(p.id), p.id)):
            name = safe_name(page.title, f"page-{page.id}")
            path = f"{folder}/{name}.md"
            if path.lower() in taken:
                path = f"{folder}/{name} ({page.id}).md"
            taken.add(path.lower())
            out[page.id] = path
        return out

    def _page(self, page: Item, path: str) -> None:
        known = self.pages.get(page.id)
        if known is not None and known.get("version") == page.version:
            self.report.unchanged += 1
            if known.get("path") and known["path"] != path:
                self.moved[path] = known["path"]
                known["path"] = path
            self.seen.add(path)
            return
        bound = self._bound()
        if bound:
            self.report.stopped_by, self.report.complete = bound, False
            self._keep(known)
            return
        try:
            self.taken += 1
            data = self.read_page(page)
        except Gone:
            return  # deleted since the listing: not seen
        except CredentialRejected:
            raise
        except BunkoError as exc:
            self.report.errors[path] = f"{page.url}: {exc}"
            self._keep(known)
            return
        self.report.fetched += 1
        if known is not None and known.get("path") and known["path"] != path:
            self.moved[path] = known["path"]
        self.seen.add(path)
        if known is not None and known.get("hash") == _digest(data) and known.get("path") == path:
            known["version"] = page.version  # a new version, the same text: nothing to write
            self.report.unchanged += 1
            return
        self.staged.append(Staged("pages", page.id, page.version, path, data, page.web))

    def _attachments(self, page: Item, page_path: str) -> None:
        folder = page_path.removesuffix(".md")
        mine = {f: v for f, v in self.files.items() if v.get("page") == page.id}
        if self.clock() - self.started >= self.settings["max_seconds"]:
            self.report.stopped_by, self.report.complete = "max_seconds", False
            for kept in mine.values():
                self._keep(kept)
            return
        try:
            found = self.list_files(page)
        except CredentialRejected:
            raise
        except BunkoError as exc:
            self.report.errors[page_path] = f"its attachments: {exc}"
            for kept in mine.values():
                self._keep(kept)
            return
        listed = set()
        for item in found:
            if not self.supported(item.title, item.media_type):
                continue
            listed.add(item.id)
            self._file(item, f"{folder}/{safe_name(item.title, f'file-{item.id}')}")
        for gone in set(mine) - listed:
            del self.files[gone]

    def _file(self, item: Item, path: str) -> None:
        known = self.files.get(item.id)
        if known is not None and known.get("version") == item.version:
            self.report.unchanged += 1
            if known.get("path") and known["path"] != path:
                self.moved[path] = known["path"]
                known["path"] = path
            if known.get("path"):
                self.seen.add(path)
            return
        if item.size is not None and item.size > self.max_file_bytes:
            self.report.errors[path] = (
                f"{item.size:,} bytes; the limit is {self.max_file_bytes:,} bytes"
            )
            self.files[item.id] = {"version": item.version, "page": item.page}  # until it changes
            return
        bound = self._bound()
        if bound:
            self.report.stopped_by, self.report.complete = bound, False
            self._keep(known)
            return
        try:
            self.taken += 1
            data = self.client.get(item.url, max_bytes=self._left()).body
        except CredentialRejected:
            raise
        except BunkoError as exc:
            self.report.errors[path] = f"{item.url}: {exc}"
            self._keep(known)
            return
        self.report.fetched += 1
        if known is not None and known.get("path") and known["path"] != path:
            self.moved[path] = known["path"]
        self.seen.add(path)
        self.staged.append(Staged("files", item.id, item.version, path, data, None, item.page))

    def written(self, staged: Staged) -> None:
        """A staged item is in the library (or failed as the file's own): known from now."""
        entry = {"version": staged.version, "path": staged.path, "hash": _digest(staged.data)}
        if staged.kind == "files":
            self.files[staged.id] = {**entry, "page": staged.page}
        else:
            self.pages[staged.id] = entry

    def renamed(self, old: str, new: str) -> None:
        """A rename the mirror made: the state follows the item to its new path."""
        for entry in (*self.pages.values(), *self.files.values()):
            if entry.get("path") == old:
                entry["path"] = new


def _json(url: str, body: bytes) -> dict[str, Any]:
    try:
        found = json.loads(body)
    except ValueError as exc:
        raise UpstreamError(f"{url} did not answer JSON: {exc}") from exc
    if not isinstance(found, dict):
        raise UpstreamError(f"{url} did not answer a JSON object")
    return found


def _number(item: dict[str, Any]) -> int:
    version = item.get("version") or {}
    number = version.get("number") if isinstance(version, dict) else None
    return number if isinstance(number, int) else -1


def _web(base: str, item: dict[str, Any]) -> str | None:
    web = (item.get("_links") or {}).get("webui")
    return base + web if isinstance(web, str) and web.startswith("/") else None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
