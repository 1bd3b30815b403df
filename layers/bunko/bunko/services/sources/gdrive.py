"""The Google Drive connector: one folder of a Drive and its subfolders, read through the
Drive API v3.

- A folder of a shared drive (`shared_drive_id`) is listed in that drive's corpus
  (`corpora=drive&driveId=…`) and its changes asked with its `driveId`.
- The first sync asks `changes.getStartPageToken` (before listing, so nothing changed during
  the listing is missed), then lists the folder with `files.list` (q = `'ID' in parents and
  trashed = false`, following `nextPageToken`), and each subfolder the same way.
- Later syncs call `changes.list` from the kept token, following `nextPageToken` until a
  `newStartPageToken`, kept for the next. The changes are the whole Drive's: a file is the
  folder's when its parents lead to it. `removed`, or a file `trashed`, is gone; a new name
  or parent renames or moves it and its document keeps its id and history; a folder moved
  into the synced folder is listed whole (the changes name the folder, not its contents).
- Files Bunko reads are downloaded with `alt=media`; Google Docs are exported as text (or
  DOCX, or Markdown, as the source says), Sheets as CSV (the first sheet), Slides as text,
  through `files.export`. A file is downloaded again only when its `md5Checksum` (a Google
  document has none: its `version`) differs from the one its document was written from.
- A listing longer than the run's time bound keeps where it was (`listing`: the start token,
  the folders still to list, the next page's token, the items read so far); the next run
  goes on from it, and nothing is mirrored before it is whole.
- A pass of the changes longer than the run's time bound keeps where it was (`changes`: the
  next page's token, the items so far; then the folders moved in still to list); the next
  run goes on from it, nothing is mirrored before it is whole, and the kept cursor moves
  only then.
- A page token the API rejects (400 or 404) means listing the folder again from the start.
"""

from __future__ import annotations

import json
import posixpath
from functools import cached_property
from typing import Any
from urllib.parse import quote, urlencode

from bunko.errors import UpstreamError
from bunko.ports.sources import WebAnswer
from bunko.services.sources.api import json_object
from bunko.services.sources.drives import DriveFile, DriveReader, TokenExpired, files_under

GOOGLE = "https://www.googleapis.com"
FOLDER = "application/vnd.google-apps.folder"
_GOOGLE_TYPES = "application/vnd.google-apps."
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
# A Google document's export, by the source's `export` setting: (MIME type, suffix).
DOC_EXPORTS = {
    "text": ("text/plain", ".txt"),
    "markdown": ("text/markdown", ".md"),
    "docx": (DOCX, ".docx"),
}
OTHER_EXPORTS = {
    "application/vnd.google-apps.spreadsheet": ("text/csv", ".csv"),
    "application/vnd.google-apps.presentation": ("text/plain", ".txt"),
}
_FIELDS = "id,name,mimeType,parents,trashed,md5Checksum,modifiedTime,version,size,webViewLink"
_PAGE_BYTES = 50_000_000
_EXPORT_BYTES = 10_000_000  # files.export's own bound


class DriveSync(DriveReader):
    @cached_property
    def base(self) -> str:
        return self.settings["url"].rstrip("/") + "/drive/v3"

    @cached_property
    def root(self) -> str:
        return self.settings["folder_id"]

    @cached_property
    def in_drive(self) -> dict[str, str]:
        """A shared drive's files are listed in its own corpus and its changes asked by its
        id."""
        shared = self.settings.get("shared_drive_id")
        return {"driveId": shared, "supportsAllDrives": "true"} if shared else {}

    # -- reading the folder ---------------------------------------------------------------

    def _get(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base}/{path}?{urlencode(params)}"
        answer = self.api.get(
            url, max_bytes=_PAGE_BYTES, headers={"Accept": "application/json"}, accept=(400, 404)
        )
        if answer.status in (400, 404):
            raise TokenExpired(f"{path} answered {answer.status}")
        return json_object(path, answer.body)

    def _check_time(self) -> None:
        if self.out_of_time():
            raise _OutOfTime()

    def _walk(self, walk: dict[str, Any], items: dict[str, dict[str, Any]] | None = None) -> None:
        """List the folders of `walk` (`todo`, first to last) and the folders found in them,
        into `items` (by default `walk["items"]`). `walk` is left as it stands after each page
        (`token`: the next page of `todo[0]`), so a run out of time leaves it ready to go on
        from."""
        items = walk["items"] if items is None else items
        todo = walk["todo"]
        while todo:
            parent = todo[0]
            if parent not in walk["done"]:
                while True:
                    if walk.get("pages"):  # one page at least each run, so it always moves
                        self._check_time()
                    walk["pages"] = walk.get("pages", 0) + 1
                    params = {
                        "q": f"'{parent}' in parents and trashed = false",
                        "fields": f"nextPageToken,incompleteSearch,files({_FIELDS})",
                        "pageSize": 1000,
                        "supportsAllDrives": "true",
                        "includeItemsFromAllDrives": "true",
                    }
                    if self.in_drive:
                        params.update(self.in_drive, corpora="drive")
                    if walk.get("token"):
                        params["pageToken"] = walk["token"]
                    try:
                        page = self._get("files", params)
                    except TokenExpired as exc:
                        if walk.get("token") and walk.get("resumed"):
                            raise  # a page token kept since an earlier run: listed again
                        raise UpstreamError(f"listing folder {parent}: {exc}") from exc
                    for f in page.get("files") or []:
                        if _apply(items, f, parent_hint=parent) == "folder":
                            todo.append(f["id"])
                    walk["token"] = page.get("nextPageToken")
                    if not walk["token"]:
                        break
                walk["done"].append(parent)
            todo.pop(0)

    def _full(self) -> dict[str, dict[str, Any]]:
        """The folder listed whole, from the start or from the listing a bound stopped
        (`listing` in the state: the start token asked before it, the folders still to
        list, the next page's token and the items read so far)."""
        walk = self.state.get("listing")
        if walk is not None:
            walk["pages"], walk["resumed"] = 0, True  # this run's pages; from a checkpoint
            try:
                self._walk(walk)
            except TokenExpired:  # its page token expired between runs: start again
                del self.state["listing"]
                walk = None
        if walk is None:
            walk = {"start": self._start(), "todo": [self.root], "done": [], "token": None}
            walk["items"] = {}
            self.state["listing"] = walk
            self._walk(walk)
        del self.state["listing"]
        self.state["cursor"] = walk["start"]
        return walk["items"]

    def _start(self) -> str:
        asked = {"supportsAllDrives": "true", **self.in_drive}
        start = self._get("changes/startPageToken", asked).get("startPageToken")
        if not isinstance(start, str):
            raise UpstreamError("changes.getStartPageToken answered no startPageToken")
        # files.list answers an empty list for a folder the credential cannot see: ask for
        # the folder first, so a lost view fails the sync instead of emptying the library.
        try:
            folder = self._get(
                f"files/{quote(self.root, safe='')}",
                {"fields": "id,mimeType,trashed", "supportsAllDrives": "true"},
            )
        except TokenExpired:
            folder = {}
        if folder.get("mimeType") != FOLDER or folder.get("trashed"):
            raise UpstreamError(
                f"the folder {self.root} cannot be seen (deleted, in the trash, or not shared "
                "with the credential)"
            )
        return start

    def _changes(self) -> dict[str, dict[str, Any]]:
        """The items with the changes since the kept cursor applied, and the folders moved
        in listed whole. A pass longer than the run's time bound keeps where it was
        (`changes`: the next page's token, the items so far, the folders known before, and
        once the pages end, the new start token and the walk of the folders moved in); the
        next run goes on from it, and the cursor moves only once the pass is whole."""
        run = self.state.get("changes")
        pages = 0
        if run is None:
            items = dict(self.state.get("items") or {})
            before = sorted(i for i in items if items[i].get("f"))
            run = {"token": self.state["cursor"], "before": before, "items": items}
            self.state["changes"] = run
        items = run["items"]
        while "walk" not in run:
            if pages:  # one page at least each run, so it always moves
                self._check_time()
            pages += 1
            page = self._get(
                "changes",
                {
                    "pageToken": run["token"],
                    "pageSize": 1000,
                    "includeRemoved": "true",
                    "supportsAllDrives": "true",
                    "includeItemsFromAllDrives": "true",
                    "fields": f"nextPageToken,newStartPageToken,changes(fileId,removed,file({_FIELDS}))",
                    **self.in_drive,
                },
            )
            for change in page.get("changes") or []:
                file_id = change.get("fileId")
                file = change.get("file")
                if not isinstance(file_id, str):
                    continue
                if change.get("removed") or not isinstance(file, dict) or file.get("trashed"):
                    items.pop(file_id, None)
                    if file_id == self.root:  # the synced folder itself is gone
                        items.clear()
                else:
                    _apply(items, file)
            if page.get("nextPageToken"):
                run["token"] = page["nextPageToken"]
                continue
            if not page.get("newStartPageToken"):
                raise UpstreamError("changes.list: a page with neither token")
            # What is the folder's now: parents lead to it. A folder that came in is listed whole.
            inside = _under(items, self.root)
            for gone in set(items) - inside:
                del items[gone]
            known = set(run["before"])
            todo = sorted(i for i in inside if items[i].get("f") and i not in known)
            run["new"] = page["newStartPageToken"]
            run["walk"] = {"todo": todo, "done": [], "token": None}  # into run["items"]
        walk = run["walk"]
        walk["pages"], walk["resumed"] = pages, pages == 0  # pages == 0: from a checkpoint
        self._walk(walk, items)
        del self.state["changes"]
        self.state["cursor"] = run["new"]
        return items

    def read(self) -> bool:
        """Bring `items` up to date. False, with `report.failed`, when the folder could
        not be read to its end: then nothing is mirrored and the token is not moved."""
        try:
            if self.state.get("cursor") and not self.state.get("listing"):
                try:
                    items = self._changes()
                except TokenExpired:  # the token was rejected: list the folder again
                    self.state.pop("changes", None)
                    items = self._full()
            else:
                items = self._full()
        except _OutOfTime:
            if self.state.get("listing") or self.state.get("changes"):
                # a whole listing, or a pass of the changes: the next run goes on from it
                self.report.complete, self.report.stopped_by = False, "max_seconds"
                return False
            self.report.failed = (
                f"the folder's listing took more than max_seconds "
                f"({self.settings['max_seconds']} s); nothing deleted"
            )
            return False
        self.state["items"] = items
        return True

    # -- its files --------------------------------------------------------------------------

    def _export(self, mime: str) -> tuple[str, str] | None:
        if mime == "application/vnd.google-apps.document":
            return DOC_EXPORTS[self.settings["export"]]
        return OTHER_EXPORTS.get(mime)

    def files(self) -> list[DriveFile]:
        def name_of(item: dict[str, Any]) -> str | None:
            mime = item.get("m") or ""
            if mime.startswith(_GOOGLE_TYPES):
                export = self._export(mime)
                if export is None:
                    return None  # a form, a drawing, a shortcut: nothing Bunko reads
                stem = item["n"]
                return stem if stem.lower().endswith(export[1]) else stem + export[1]
            return item["n"] if self.supported(posixpath.basename(item["n"])) else None

        return files_under(self.state["items"], self.root, self.record.folder, name_of=name_of)

    def download(self, file: DriveFile, max_bytes: int) -> bytes:
        file_id = quote(file.id, safe="")
        export = self._export(file.mime) if file.mime.startswith(_GOOGLE_TYPES) else None
        if export is not None:
            url = f"{self.base}/files/{file_id}/export?{urlencode({'mimeType': export[0]})}"
            limit = min(max_bytes, _EXPORT_BYTES)
        else:
            url = f"{self.base}/files/{file_id}?alt=media&supportsAllDrives=true"
            limit = max_bytes
        return self.api.get(url, max_bytes=limit).body


class _OutOfTime(Exception):
    pass


def _apply(
    items: dict[str, dict[str, Any]], f: dict[str, Any], *, parent_hint: str | None = None
) -> str | None:
    """One File resource onto the items kept: "folder", "file", or None (not kept)."""
    file_id, name, mime = f.get("id"), f.get("name"), f.get("mimeType") or ""
    if not isinstance(file_id, str) or not isinstance(name, str) or f.get("trashed"):
        return None
    parents = f.get("parents") or ([parent_hint] if parent_hint else [])
    entry: dict[str, Any] = {"n": name, "p": parents[0] if parents else None, "m": mime}
    if mime == FOLDER:
        entry["f"] = 1
        items[file_id] = entry
        return "folder"
    entry["t"] = f.get("md5Checksum") or f"v{f.get('version', '')}:{f.get('modifiedTime', '')}"
    size = f.get("size")
    if isinstance(size, str) and size.isdigit():
        entry["s"] = int(size)
    if isinstance(f.get("webViewLink"), str):
        entry["w"] = f["webViewLink"]
    items[file_id] = entry
    return "file"


def _under(items: dict[str, dict[str, Any]], root: str) -> set[str]:
    """The ids whose parents lead to `root`."""
    inside: set[str] = set()
    for item_id in items:
        chain, current, depth = [], item_id, 0
        while current is not None and current != root and depth < 256:
            if current in inside:
                break
            chain.append(current)
            current = (items.get(current) or {}).get("p")
            depth += 1
            if current is not None and current not in items and current != root:
                current = None  # a parent outside what is known: not the folder's
        if current is not None and depth < 256:  # not a loop of parents
            inside.update(chain)
    return inside


def rate_limited(answer: WebAnswer) -> bool:
    """Whether a 403 is Drive's rate limit ("Resolve errors": `rateLimitExceeded`,
    `userRateLimitExceeded`), to be waited out, not a refused credential."""
    try:
        errors = json.loads(answer.body).get("error", {}).get("errors") or []
    except (ValueError, AttributeError):
        return False
    return any(
        isinstance(e, dict) and e.get("reason") in ("rateLimitExceeded", "userRateLimitExceeded")
        for e in errors
    )
