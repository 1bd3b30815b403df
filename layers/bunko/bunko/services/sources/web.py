"""The website connector: pages of one site, from a start URL (following same-site links) or
a sitemap, at most `max_pages`, robots.txt honoured, each page's main text kept as a Markdown
document under the source's folder.

Incremental: each page's ETag and Last-Modified are kept, and the next sync asks with
If-None-Match / If-Modified-Since; a 304 costs a request and no body, and its links (kept
too) are followed as before. A page answered 404 or 410, or no longer linked (or listed in
the sitemap), is not seen: the mirror deletes its document. A page that fails (a timeout, a
5xx, too big) is recorded as an error and kept as it was: one bad page never loses a sync.
"""

from __future__ import annotations

import hashlib
import posixpath
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

from bunko.errors import BunkoError
from bunko.ports.sources import WebAnswer, WebFetcher
from bunko.services.sources.records import SourceRecord, SyncReport
from bunko.services.sources.web_pages import read_page, sitemap_urls

_REDIRECTS = 5
AGENT = "BunkoBot"  # the name robots.txt rules are read for (and `*`)
_ROBOTS_BYTES = 512 * 1024
_SITEMAP_BYTES = 50_000_000  # the sitemap protocol's own bound
_HTML = ("text/html", "application/xhtml+xml")
_KEPT_TYPES = {  # other types a site links to that Bunko reads, kept as they are
    "application/pdf": ".pdf",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/csv": ".csv",
    "application/json": ".json",
}


@dataclass
class Staged:
    """A page read this sync, to be written once the mirror has run."""

    path: str
    data: bytes
    url: str


def same_site(url: str, origin: tuple[str, str]) -> bool:
    parts = urlsplit(url)
    return (parts.scheme, parts.netloc.lower()) == origin


def page_path(folder: str, url: str, suffix: str) -> str:
    """Where a page's document lives: the folder, the host, the URL's path (an index for a
    folder), with `suffix`; a query string becomes a short digest, so ?page=2 is its own."""
    parts = urlsplit(url)
    path = unquote(parts.path) or "/"
    if path.endswith("/"):
        path += "index"
    stem, ext = posixpath.splitext(path)
    if ext.lower() in (".html", ".htm", ".php", ".asp", ".aspx", ".jsp", suffix):
        path = stem
    if parts.query:
        path += "~" + hashlib.sha256(parts.query.encode()).hexdigest()[:8]
    clean = "/".join(seg for seg in path.split("/") if seg not in ("", ".", ".."))
    return f"{folder}/{parts.hostname}/{clean or 'index'}{suffix}"


def _markdown(title: str, text: str) -> bytes:
    """The page as the library keeps it: its title as a heading, then its main text (its URL
    is the document's `url` metadata)."""
    body = text if not title or text.startswith(title) else f"# {title}\n\n{text}"
    return (body.strip() + "\n").encode("utf-8")


class WebSync:
    def __init__(
        self,
        record: SourceRecord,
        state: dict[str, Any],
        fetcher: WebFetcher,
        report: SyncReport,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.record = record
        self.settings = record.settings
        self.pages: dict[str, dict[str, Any]] = state.setdefault("pages", {})
        self.fetcher = fetcher
        self.report = report
        self.clock = clock
        self.started = clock()
        start = urlsplit(self.settings["url"])
        self.origin = (start.scheme, start.netloc.lower())
        self.robots: RobotFileParser | None = None
        self.staged: dict[str, Staged] = {}
        self.seen: dict[str, str] = {}  # library path → URL

    # -- requests -----------------------------------------------------------------------

    def _get(self, url: str, headers: dict[str, str], max_bytes: int) -> tuple[str, WebAnswer]:
        """GET, following same-site redirects (each through the fetcher's guard); the final
        URL and its answer. A redirect off the site answers as a 404 would: not this site's."""
        for _ in range(_REDIRECTS + 1):
            self.report.requests += 1
            answer = self.fetcher.get(
                url, headers, max_bytes=max_bytes, allow_private=self.record.private
            )
            self.report.bytes += len(answer.body)
            if answer.status in (301, 302, 303, 307, 308) and "location" in answer.headers:
                url = urljoin(url, answer.headers["location"])
                if not same_site(url, self.origin):
                    return url, WebAnswer(404)
                continue
            return url, answer
        raise BunkoError(f"more than {_REDIRECTS} redirects")

    def _bound(self) -> str | None:
        if self.report.bytes >= self.settings["max_bytes"]:
            return "max_bytes"
        if self.clock() - self.started >= self.settings["max_seconds"]:
            return "max_seconds"
        return None

    def _read_robots(self) -> bool:
        """robots.txt as RFC 9309 reads it: 4xx, no rules; 5xx or unreachable, nothing may be
        fetched (the sync stops before the mirror: no page is deleted for it)."""
        url = f"{self.origin[0]}://{self.origin[1]}/robots.txt"
        parser = RobotFileParser(url)
        try:
            _, answer = self._get(url, {}, _ROBOTS_BYTES)
        except BunkoError as exc:
            self.report.failed = f"robots.txt: {exc}"
            return False
        if answer.status >= 500:
            self.report.failed = f"robots.txt answered {answer.status}"
            return False
        parser.parse(
            answer.body.decode("utf-8", "replace").splitlines() if answer.status == 200 else []
        )
        self.robots = parser
        return True

    def _allowed(self, url: str) -> bool:
        return self.robots is None or self.robots.can_fetch(AGENT, url)

    # -- what to visit ------------------------------------------------------------------

    def _sitemap(self) -> list[str] | None:
        """The sitemap's same-site pages (an index's sitemaps read too, within the bounds);
        None when it cannot be read (the sync stops before the mirror)."""
        todo, urls, done = deque([self.settings["url"]]), [], set()
        while todo and len(urls) < self.settings["max_pages"]:
            where = todo.popleft()
            if where in done or not same_site(where, self.origin):
                continue
            done.add(where)
            try:
                _, answer = self._get(where, {}, _SITEMAP_BYTES)
            except BunkoError as exc:
                self.report.failed = f"sitemap {where}: {exc}"
                return None
            if answer.status != 200:
                self.report.failed = f"sitemap {where} answered {answer.status}"
                return None
            locs, index = sitemap_urls(answer.body)
            (todo.extend if index else urls.extend)(locs)
        return [u for u in dict.fromkeys(urls) if same_site(u, self.origin)]

    def run(self) -> None:
        """Visit the site: fills `seen` and `staged` (the caller mirrors
        then writes). Returns early, with `report.failed`, when the site cannot be read at
        all (robots.txt or the sitemap): then nothing is mirrored."""
        if not self._read_robots():
            return
        is_sitemap = self.settings.get("sitemap")
        if is_sitemap is None:
            is_sitemap = urlsplit(self.settings["url"]).path.lower().endswith(".xml")
        listed = self._sitemap() if is_sitemap else None
        if is_sitemap and listed is None:
            return
        queue = deque(listed if listed is not None else [self.settings["url"]])
        visited: set[str] = set()
        kept_state: dict[str, dict[str, Any]] = {}
        while queue:
            url = queue.popleft()
            if url in visited or not same_site(url, self.origin) or not self._allowed(url):
                continue
            if len(visited) >= self.settings["max_pages"]:
                self.report.stopped_by = "max_pages"
                break
            bound = self._bound()
            if bound:
                self.report.stopped_by, self.report.complete = bound, False
                # Pages not reached are not known to be gone: they stay as they are.
                for known_url, entry in self.pages.items():
                    if known_url not in visited and "path" in entry:
                        self.seen.setdefault(entry["path"], known_url)
                        kept_state.setdefault(known_url, entry)
                break
            visited.add(url)
            entry = self._visit(url)
            if entry is None:
                continue
            kept_state[url] = entry
            if listed is None and not entry.get("nofollow"):
                queue.extend(link for link in entry.get("links", []) if link not in visited)
        self.pages.clear()
        self.pages.update(kept_state)

    def _visit(self, url: str) -> dict[str, Any] | None:
        """One page: its new state entry (None: not a page of the source now)."""
        known = self.pages.get(url, {})
        headers = {}
        if known.get("etag"):
            headers["If-None-Match"] = known["etag"]
        if known.get("modified"):
            headers["If-Modified-Since"] = known["modified"]
        try:
            final, answer = self._get(url, headers, self.settings["max_page_bytes"])
        except BunkoError as exc:
            return self._failed(url, known, str(exc))
        if answer.status == 304 and known:
            # As it was: a kept page stays, a page only followed (noindex) is followed again.
            self.report.not_modified += 1
            if known.get("path"):
                self.report.unchanged += 1
                self.seen[known["path"]] = url
            return known
        if answer.status in (404, 410):
            return None
        if answer.status != 200:
            return self._failed(url, known, f"answered {answer.status}")
        self.report.fetched += 1
        kind, _, params = answer.headers.get("content-type", "text/html").partition(";")
        kind = kind.strip().lower()
        charset = None
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip("\"' ")
        entry: dict[str, Any] = {
            "etag": answer.headers.get("etag"),
            "modified": answer.headers.get("last-modified"),
        }
        if kind in _HTML:
            page = read_page(answer.body, final, charset)
            entry["links"] = [link for link in page.links if same_site(link, self.origin)]
            entry["nofollow"] = page.nofollow
            if page.noindex or not page.text.strip():
                return entry  # followed for its links, not kept
            path = page_path(self.record.folder, final, ".md")
            data = _markdown(page.title, page.text)
        elif kind in _KEPT_TYPES:
            suffix = posixpath.splitext(urlsplit(final).path)[1] or _KEPT_TYPES[kind]
            path = page_path(self.record.folder, final, suffix.lower())
            data = answer.body
        else:
            return entry  # a type Bunko does not read: not kept
        digest = hashlib.sha256(data).hexdigest()
        entry["path"], entry["hash"] = path, digest
        self.seen[path] = url
        if known.get("hash") == digest and known.get("path") == path:
            self.report.unchanged += 1  # new headers, same text: nothing to write
        else:
            self.staged[path] = Staged(path, data, final)
        return entry

    def _failed(self, url: str, known: dict[str, Any], why: str) -> dict[str, Any] | None:
        """A page that could not be read this time: recorded, and kept as it was."""
        self.report.errors[known.get("path") or url] = f"{url}: {why}"
        if known.get("path"):
            self.seen[known["path"]] = url
            return known
        return None
