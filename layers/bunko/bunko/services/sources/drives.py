"""What the two cloud-drive connectors (SharePoint/OneDrive through Microsoft Graph, Google
Drive) share: a drive's items kept by id between syncs, and the files of the synced folder
they make.

A drive names an item by its id, not its path: a rename or a move changes the item's name
or parent and keeps its id. So a sync keeps every item it knows (`items`: id → name, parent,
folder or file, content tag) and the document each file of the folder became (`kept`: id →
library path, content tag). A file whose path differs from the one kept was renamed or
moved: the mirror moves its document (`moved`); a file whose tag differs from the one kept
changed: only those are downloaded. Items are stored with short keys (n, p, f, t, s, m):
the state of a large drive is kept whole on every sync.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bunko.errors import BunkoError
from bunko.services.sources.api import ApiClient, CredentialRejected, credential_failure
from bunko.services.sources.records import SourceRecord, SyncReport

_DEPTH = 256  # deeper than any drive allows: a loop in parents is not followed forever


class TokenExpired(BunkoError):
    """The change token is too old for the service (Graph's 410 Gone): list everything again
    from `restart` (the service's fresh link, when it gave one)."""

    def __init__(self, message: str, restart: str | None = None) -> None:
        super().__init__(message)
        self.restart = restart


@dataclass(frozen=True)
class DriveFile:
    """A file of the synced folder now."""

    id: str
    path: str  # its library path: the source's folder, then its path in the synced folder
    tag: str  # changes when its content may have (Graph's cTag or eTag; Drive's md5/version)
    size: int | None
    name: str  # its name in the drive
    mime: str = ""
    url: str = ""  # where a person opens it (Graph's webUrl, Drive's webViewLink)


def path_in(items: dict[str, dict[str, Any]], item_id: str, scope: str) -> list[str] | None:
    """The names from under the folder `scope` down to the item, None when the item is not
    under it (or a parent is unknown, or the parents loop)."""
    names: list[str] = []
    current: str | None = item_id
    for _ in range(_DEPTH):
        if current == scope:
            return list(reversed(names))
        item = items.get(current or "")
        if item is None:
            return None
        names.append(item["n"])
        current = item.get("p")
    return None


def clean_name(name: str) -> str:
    """A drive item's name as one library path segment (a name may hold what a path may not)."""
    cleaned = name.replace("/", "_").replace("\\", "_").strip()
    return cleaned if cleaned not in ("", ".", "..") else "_"


def files_under(
    items: dict[str, dict[str, Any]],
    scope: str,
    folder: str,
    *,
    name_of: Callable[[dict[str, Any]], str | None],
) -> list[DriveFile]:
    """The files under `scope`, each with its library path under `folder`; `name_of` gives a
    file's name as kept (None: a file of a type Bunko does not read, not taken)."""
    out: list[DriveFile] = []
    for item_id, item in sorted(items.items()):
        if item.get("f"):
            continue
        name = name_of(item)
        if name is None:
            continue
        where = path_in(items, item.get("p") or "", scope)
        if where is None:
            continue
        segments = [clean_name(s) for s in where] + [clean_name(name)]
        path = posixpath.join(folder, *segments)
        tag, mime = item.get("t") or "", item.get("m") or ""
        found = DriveFile(item_id, path, tag, item.get("s"), name, mime, item.get("w") or "")
        out.append(found)
    # A drive lets two files of one folder share a name; a library path holds one document.
    # The first by id keeps the name, the others take their id before the suffix, always
    # the same, so syncs do not swap them.
    taken: set[str] = set()
    for n, found in enumerate(out):
        if found.path.lower() in taken:
            stem, suffix = posixpath.splitext(found.path)
            out[n] = replace(found, path=f"{stem}~{found.id[-12:]}{suffix}")
        taken.add(out[n].path.lower())
    return sorted(out, key=lambda f: f.path)


class DriveReader:
    """What one sync's reading of a drive holds (graph.GraphSync, gdrive.DriveSync): the
    source, its kept state, the API client, the report, the files Bunko reads, and the time
    it has run, which `max_seconds` bounds."""

    def __init__(
        self,
        record: SourceRecord,
        state: dict[str, Any],
        api: ApiClient,
        report: SyncReport,
        *,
        supported: Callable[[str], bool],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.record = record
        self.settings = record.settings
        self.state = state
        self.api = api
        self.report = report
        self.supported = supported
        self.clock = clock
        self.started = clock()

    def out_of_time(self) -> bool:
        return self.clock() - self.started >= self.settings["max_seconds"]


class DriveRun(Protocol):
    """One sync's reading of a drive (graph.GraphSync, gdrive.DriveSync)."""

    def read(self) -> bool: ...

    def files(self) -> list[DriveFile]: ...

    def download(self, file: DriveFile, max_bytes: int) -> bytes: ...


def sync_files(
    run: DriveRun,
    *,
    settings: dict[str, Any],
    state: dict[str, Any],
    report: SyncReport,
    mirror: Callable[[list[str], dict[str, str]], list[tuple[str, str]]],
    write: Callable[[DriveFile, bytes], bool],
    max_file_bytes: int,
    clock: Callable[[], float],
    relabel: Callable[[DriveFile], None] = lambda file: None,
) -> None:
    """A drive's sync: read what changed, mirror (renames told by ids), then download and
    write the files whose tag changed, within the run's bounds. `mirror(seen, moved)` gives
    the renames it made; `write(file, data)` is False when the failure may pass (the file is
    tried again next time). A listing that fails, or a credential refused, ends the sync
    with `report.failed` before the mirror: nothing is deleted, the change token stays.
    `relabel(file)`: a file moved or renamed whose content did not change (not downloaded):
    its document's link follows it (SharePoint's webUrl is the item's path)."""
    started = clock()
    try:
        if not run.read():
            return
        found = run.files()
        kept: dict[str, dict[str, str]] = state.setdefault("kept", {})
        moved = {
            f.path: kept[f.id]["path"]
            for f in found
            if f.id in kept and kept[f.id]["path"] != f.path
        }
        renamed = set(mirror([f.path for f in found], moved))
        now = {f.id for f in found}
        for gone in set(kept) - now:
            del kept[gone]
        for f in found:
            known = kept.get(f.id)
            if known is not None and known["path"] != f.path:
                if (known["path"], f.path) in renamed:
                    known["path"] = f.path
                else:  # its document did not move (it was being indexed): written anew
                    del kept[f.id]
        todo = [f for f in found if (kept.get(f.id) or {}).get("tag") != f.tag]
        for f in found:
            if f.path in moved and f.id in kept and kept[f.id].get("tag") == f.tag:
                relabel(f)
        report.unchanged += len(found) - len(todo)
        for n, f in enumerate(todo):
            bound = None
            if n >= settings["max_files"]:
                bound = "max_files"
            elif report.bytes >= settings["max_bytes"]:
                bound = "max_bytes"
            elif clock() - started >= settings["max_seconds"]:
                bound = "max_seconds"
            if bound:
                report.stopped_by, report.complete = bound, False
                break
            if f.size is not None and f.size > max_file_bytes:
                report.errors[f.path] = f"{f.size:,} bytes; the limit is {max_file_bytes:,} bytes"
                kept[f.id] = {"path": f.path, "tag": f.tag}  # not read again until it changes
                continue
            try:
                data = run.download(f, max_file_bytes)
            except CredentialRejected:
                raise
            except BunkoError as exc:
                report.errors[f.path] = str(exc)  # tried again next sync
                continue
            report.fetched += 1
            if write(f, data):
                kept[f.id] = {"path": f.path, "tag": f.tag}
            else:
                report.complete = False
    except CredentialRejected as exc:
        report.failed = credential_failure(exc)
    except BunkoError as exc:
        if report.failed is None:
            report.failed = f"the listing failed, nothing deleted: {exc}"
