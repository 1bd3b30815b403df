"""The Confluence connector: the pages of one space (their storage-format bodies as text) and
their attachments of types Bunko reads, each a document under the source's folder.

Cloud (REST v2) and Data Center (REST v1) are read through services/sources/confluence_api.py.

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

import hashlib
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bunko.errors import BunkoError
from bunko.services.sources.api import ApiClient, CredentialRejected, Gone, credential_failure
from bunko.services.sources.confluence_api import ConfluenceApi, Item
from bunko.services.sources.records import SourceRecord, SyncReport

_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]+")


def safe_name(name: str, fallback: str) -> str:
    """A title as one path segment: no slashes or control characters, at most 200 chars."""
    name = unicodedata.normalize("NFC", _UNSAFE.sub("-", name or "")).strip(" .")
    return name[:200].strip(" .") or fallback


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
        self.state = state
        self.pages: dict[str, dict[str, Any]] = state.setdefault("pages", {})
        self.files: dict[str, dict[str, Any]] = state.setdefault("files", {})
        self.api = ConfluenceApi(s, client, out_of_time=self.out_of_time)
        self.report = report
        self.supported = supported
        self.max_file_bytes = max_file_bytes
        self.clock = clock
        self.started = clock()
        self.seen: set[str] = set()
        self.moved: dict[str, str] = {}  # new path → old
        self.staged: list[Staged] = []
        self.taken = 0  # bodies and files fetched this run

    # -- a run ----------------------------------------------------------------------------

    def _left(self) -> int:
        return max(1, min(self.max_file_bytes, self.settings["max_bytes"] - self.report.bytes))

    def out_of_time(self) -> bool:
        return self.clock() - self.started >= self.settings["max_seconds"]

    def _bound(self) -> str | None:
        if self.taken >= self.settings["max_pages"]:
            return "max_pages"
        if self.report.bytes >= self.settings["max_bytes"]:
            return "max_bytes"
        if self.out_of_time():
            return "max_seconds"
        return None

    def _keep(self, kept: dict[str, Any] | None) -> str | None:
        """Not read this time: what the library has stays as it was (its path)."""
        if kept is not None and kept.get("path"):
            self.seen.add(kept["path"])
            return kept["path"]
        return None

    def run(self) -> bool:
        """List the space and read what changed: fills `seen`, `moved` and `staged`. False
        (with `report.failed`) when the space cannot be listed: then nothing is mirrored."""
        try:
            pages = self.api.list_pages()
        except CredentialRejected as exc:
            self.report.failed = credential_failure(exc)
            return False
        except BunkoError as exc:
            self.report.failed = f"listing the space: {exc}"
            return False
        if not pages and self.pages:
            # A space that lists nothing where pages were is far more often a credential
            # that lost its view of them than a space emptied: the mirror would delete all.
            self.report.failed = (
                f"the space listed no pages where {len(self.pages)} were; nothing deleted "
                "(if it is empty now, remove the source or its documents)"
            )
            return False
        paths = self._page_paths(pages)
        try:
            for page in pages:
                # where its document is after this run (its old path when not read now)
                paths[page.id] = self._page(page, paths[page.id]) or paths[page.id]
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

    def _page(self, page: Item, path: str) -> str | None:
        """Read the page if it changed; the path its document has after this run."""
        known = self.pages.get(page.id)
        if known is not None and known.get("version") == page.version:
            self.report.unchanged += 1
            if known.get("path") and known["path"] != path:
                self.moved[path] = known["path"]
                known["path"] = path
            self.seen.add(path)
            return path
        bound = self._bound()
        if bound:
            self.report.stopped_by, self.report.complete = bound, False
            return self._keep(known)
        try:
            self.taken += 1
            data = self.api.read_page(page, max_bytes=self._left())
        except Gone:
            return None  # deleted since the listing: not seen
        except CredentialRejected:
            raise
        except BunkoError as exc:
            self.report.errors[path] = f"{page.url}: {exc}"
            return self._keep(known)
        self.report.fetched += 1
        if known is not None and known.get("path") and known["path"] != path:
            self.moved[path] = known["path"]
        self.seen.add(path)
        if known is not None and known.get("hash") == _digest(data) and known.get("path") == path:
            known["version"] = page.version  # a new version, the same text: nothing to write
            self.report.unchanged += 1
            return path
        self.staged.append(Staged("pages", page.id, page.version, path, data, page.web))
        return path

    def _attachments(self, page: Item, page_path: str) -> None:
        folder = page_path.removesuffix(".md")
        mine = {f: v for f, v in self.files.items() if v.get("page") == page.id}
        if self.out_of_time():
            self.report.stopped_by, self.report.complete = "max_seconds", False
            for kept in mine.values():
                self._keep(kept)
            return
        try:
            found = self.api.list_files(page)
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
            data = self.api.client.get(item.url, max_bytes=self._left()).body
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


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
