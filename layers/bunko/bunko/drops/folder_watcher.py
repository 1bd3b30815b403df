"""DropFolderWatcher: files dropped into watched folders are ingested; deleted files removed.

A file's logical path is its path relative to the watched folder (with the folder's prefix);
its category is the folder's category or, when that is unset, the name of the first
sub-folder it sits in (drop/manuals/guide.pdf → category "manuals").
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from watchfiles import Change, watch

from bunko.errors import BunkoError
from bunko.services.ingest import IngestService, Upload

log = logging.getLogger(__name__)

SOURCE = "drop"
# How often the watch loop wakes up without changes (also how soon it reports it is live).
_READY_POLL_MS = 200
_START_TIMEOUT_S = 60
_IGNORED_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", "~")


@dataclass(frozen=True)
class WatchedFolder:
    path: Path
    category: str | None = None
    prefix: str = ""


def _ignored(relative: Path) -> bool:
    return any(p.startswith((".", "~$")) for p in relative.parts) or relative.name.endswith(
        _IGNORED_SUFFIXES
    )


class DropFolderWatcher:
    def __init__(
        self, ingest: IngestService, workspace_id: str, folders: list[WatchedFolder]
    ) -> None:
        self.ingest = ingest
        self.workspace_id = workspace_id
        self.folders = folders
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        for folder in folders:
            folder.path.mkdir(parents=True, exist_ok=True)

    def _locate(self, file: Path) -> tuple[WatchedFolder, Path] | None:
        for folder in self.folders:
            try:
                relative = file.resolve().relative_to(folder.path.resolve())
            except ValueError:
                continue
            return (None, relative) if _ignored(relative) else (folder, relative)
        return None

    def _logical(self, folder: WatchedFolder, relative: Path) -> tuple[str, str | None]:
        path = "/".join(filter(None, [folder.prefix.strip("/"), relative.as_posix()]))
        category = folder.category or (relative.parts[0] if len(relative.parts) > 1 else None)
        return path, category

    def file_changed(self, file: Path) -> None:
        found = self._locate(file)
        if not found or found[0] is None or not file.is_file():
            return
        path, category = self._logical(*found)
        try:
            # The upload policy's size check before the file is read into memory.
            self.ingest.policy.size(file.stat().st_size, what=path)
            self.ingest.submit(
                Upload(
                    self.workspace_id,
                    file.read_bytes(),
                    path=path,
                    category=category,
                    source=SOURCE,
                )
            )
        except (BunkoError, OSError) as exc:
            log.warning("could not ingest %s: %s", path, exc)

    def file_deleted(self, file: Path) -> None:
        found = self._locate(file)
        if not found or found[0] is None:
            return
        path, _ = self._logical(*found)
        # The path may have been a folder: remove everything that was dropped under it.
        for doc in list(self.ingest.metadata.iter_documents(self.workspace_id)):
            if doc.source == SOURCE and (doc.path == path or doc.path.startswith(path + "/")):
                self.ingest.delete_document(self.workspace_id, doc.id)

    def sync(self) -> None:
        """Catch up with changes made while the watcher was not running."""
        seen: set[str] = set()
        for folder in self.folders:
            for file in sorted(folder.path.rglob("*")):
                found = self._locate(file)
                if file.is_file() and found and found[0] is not None:
                    seen.add(self._logical(*found)[0])
                    self.file_changed(file)
        for doc in list(self.ingest.metadata.iter_documents(self.workspace_id)):
            if doc.source == SOURCE and doc.path not in seen:
                self.ingest.delete_document(self.workspace_id, doc.id)

    def _run(self) -> None:
        paths = [f.path for f in self.folders]
        # The first (possibly empty) yield comes once the OS watch is live; catching up only
        # then means a file written while the watcher was starting is never missed.
        changes_seen = watch(
            *paths,
            stop_event=self._stop,
            recursive=True,
            raise_interrupt=False,
            yield_on_timeout=True,
            rust_timeout=_READY_POLL_MS,
        )
        for changes in changes_seen:
            if not self._ready.is_set():
                try:
                    self.sync()
                finally:
                    self._ready.set()
            for change, raw in sorted(changes, key=lambda c: c[1]):
                file = Path(raw)
                if change is Change.deleted:
                    self.file_deleted(file)
                elif file.is_dir():
                    for child in sorted(file.rglob("*")):  # a folder moved in at once
                        self.file_changed(child)
                else:
                    self.file_changed(file)
        self._ready.set()  # stopped before it was ever live: do not keep start() waiting

    def start(self) -> None:
        """Watch from now on, after catching up with what changed while not watching."""
        self._stop.clear()
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="bunko-watch", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout=_START_TIMEOUT_S):
            log.warning("the folder watcher took over %s s to start", _START_TIMEOUT_S)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
