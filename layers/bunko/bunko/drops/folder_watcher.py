"""DropFolderWatcher: files dropped into watched folders are ingested; deleted files removed.

A file's logical path is its path relative to the watched folder (with the folder's prefix);
its category is the folder's category or, when that is unset, the name of the first
sub-folder it sits in (drop/manuals/guide.pdf → category "manuals").

Its metadata comes from its sidecar, `guide.pdf.metadata.json` beside it (drops/sidecars.py),
and a Markdown file's front matter (domain/front_matter.py). A sidecar is never a document: when
it is written, changed or deleted, the document of the file beside it (if there is one yet)
gets the new metadata without the file being read again; a file that comes later reads it.
A file with neither keeps the metadata its document has (set over REST, say).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from watchfiles import Change, watch

from bunko.domain.front_matter import MAX_FRONT_MATTER_BYTES
from bunko.domain.metadata import Metadata
from bunko.domain.sources import DROP_FOLDER
from bunko.drops.sidecars import (
    MAX_SIDECAR_BYTES,
    dropped_metadata,
    is_sidecar,
    log_refused,
    sidecar_name,
    subject_name,
)
from bunko.errors import BunkoError, ValidationError
from bunko.services.ingest import IngestService, Upload, normalise_path

log = logging.getLogger(__name__)

SOURCE = DROP_FOLDER
# How often the watch loop wakes up without changes (also how soon it reports it is live).
_READY_POLL_MS = 200
_START_TIMEOUT_S = 60
_IGNORED_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", "~")


@dataclass(frozen=True)
class WatchedFolder:
    path: Path
    category: str | None = None
    prefix: str = ""
    # Top-level sub-folders another library takes (drops/folder_monitor.py), NFC.
    skip: frozenset[str] = frozenset()


def _ignored(relative: Path) -> bool:
    return any(p.startswith((".", "~$")) for p in relative.parts) or relative.name.endswith(
        _IGNORED_SUFFIXES
    )


def _digest(file: Path) -> str | None:
    """The SHA-256 of the file's bytes, as the ingest keeps a document's (None: unreadable)."""
    try:
        with file.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def _nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


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
        # A catch-up asked for by the scheduler, served by the watch thread between two
        # batches (never beside one: a mirror must not race a file being taken).
        self._catch_up = threading.Event()
        self._caught_up = threading.Event()
        self._catch_up_error: BaseException | None = None
        for folder in folders:
            folder.path.mkdir(parents=True, exist_ok=True)

    def _locate(self, file: Path) -> tuple[WatchedFolder, Path] | None:
        for folder in self.folders:
            try:
                relative = file.resolve().relative_to(folder.path.resolve())
            except ValueError:
                continue
            if len(relative.parts) > 1 and _nfc(relative.parts[0]) in folder.skip:
                continue  # a sub-folder mapped elsewhere: another watched folder takes it
            return (None, relative) if _ignored(relative) else (folder, relative)
        return None

    def _logical(self, folder: WatchedFolder, relative: Path) -> tuple[str, str | None]:
        """The file's logical path (as the ingest stores it: NFC, so a name macOS wrote in NFD
        matches its document) and its category."""
        path = "/".join(filter(None, [folder.prefix.strip("/"), relative.as_posix()]))
        path = unicodedata.normalize("NFC", path)
        category = folder.category or (relative.parts[0] if len(relative.parts) > 1 else None)
        return path, category

    def _safely(self, action: Callable[[Path], None], file: Path) -> None:
        """`action(file)`; whatever one file raises is logged by its name and the file
        skipped (a later change to it is a new event, and every start's sync tries it
        again): one bad drop must never end the watch."""
        try:
            action(file)
        except Exception:
            log.exception("could not take %s (skipped until it changes)", file)

    def file_changed(self, file: Path) -> None:
        found = self._locate(file)
        if not found or found[0] is None:
            return
        if is_sidecar(file.name):
            self.sidecar_changed(file)
            return
        if not file.is_file():
            return
        path, category = self._logical(*found)
        try:
            # The upload policy's size check before the file is read into memory.
            self.ingest.policy.size(file.stat().st_size, what=path)
            data = file.read_bytes()
            try:
                metadata = self._metadata(file, path, data)
            except (ValidationError, OSError) as exc:
                log_refused(path, exc)
                metadata = None  # the document keeps what it has
            self.ingest.submit(
                Upload(
                    self.workspace_id,
                    data,
                    path=path,
                    category=category,
                    source=SOURCE,
                    metadata=metadata,
                )
            )
        except (BunkoError, OSError) as exc:
            log.warning("could not ingest %s: %s", path, exc)

    def _seen(self, file: Path, seen: dict[str, Path]) -> None:
        """Add `file` to `seen` (logical path → file) when it is a file the folder holds as a
        document: in a watched folder, not ignored, not a sidecar."""
        found = self._locate(file)
        if found and found[0] is not None and not is_sidecar(file.name) and file.is_file():
            seen.setdefault(self._logical(*found)[0], file)

    def _mirror(self, seen: dict[str, Path], within: list[str] | None = None) -> None:
        """The library's one mirror rule (IngestService.mirror) for what the folder holds now:
        a dropped file no longer here goes, unless its bytes are at a path seen now that holds
        no document yet (it was moved or renamed: its document and history follow it)."""
        self.ingest.mirror(
            self.workspace_id,
            SOURCE,
            seen,
            within=within,
            fingerprint=lambda path: _digest(seen[path]),
        )

    def changed(self, changes: Iterable[tuple[Change, str]]) -> None:
        """One batch of the watch: deleted files and folders are mirrored first, with the files
        written in the same batch as where they may have moved (a rename is a delete and an
        add in one batch), then each written file is taken."""
        written: list[Path] = []
        scopes: list[str] = []
        for change, raw in sorted(changes, key=lambda c: c[1]):
            file = Path(raw)
            if change is not Change.deleted or file.exists():
                if file.is_dir():  # a folder moved in at once: each file reads its own sidecar
                    written += [c for c in sorted(file.rglob("*")) if not is_sidecar(c.name)]
                else:
                    written.append(file)
                continue
            found = self._locate(file)
            if not found or found[0] is None:
                continue
            if is_sidecar(file.name):
                written.append(file)  # file_changed hands it to sidecar_changed
                continue
            path, _ = self._logical(*found)
            scopes += [path, path + "/"]  # it may have been a folder: everything under it
        if scopes:
            seen: dict[str, Path] = {}
            for file in written:
                self._seen(file, seen)
            try:
                self._mirror(seen, scopes)
            except Exception:  # the watch goes on: the next start's catch-up mirrors again
                log.exception("could not remove what was deleted from the drop folder")
        for file in written:
            self._safely(self.file_changed, file)

    def sidecar_changed(self, sidecar: Path) -> None:
        """A sidecar was written, changed or deleted: the document of the file beside it, if
        that file is in the folder and has one, takes the metadata they give now (a deleted
        sidecar's part cleared). Nothing else: a file dropped later reads its sidecar."""
        file = sidecar.with_name(subject_name(sidecar.name))
        found = self._locate(file)
        if not found or found[0] is None or is_sidecar(file.name) or not file.is_file():
            return
        path, _ = self._logical(*found)
        try:
            doc = self.ingest.document_at(self.workspace_id, normalise_path(path))
            if doc is None:
                return
            with file.open("rb") as f:
                head = f.read(MAX_FRONT_MATTER_BYTES)  # enough for the front matter
            try:
                metadata = self._metadata(file, path, head)
            except (ValidationError, OSError) as exc:
                log_refused(path, exc)
                return
            self.ingest.set_metadata(self.workspace_id, doc.id, metadata or {})
        except (BunkoError, OSError) as exc:
            log.warning("could not update the metadata of %s: %s", path, exc)

    def _metadata(self, file: Path, path: str, data: bytes) -> Metadata | None:
        """What the file's sidecar and front matter give it (None: nothing); ValidationError
        or OSError when its sidecar is refused."""
        sidecar = file.with_name(sidecar_name(file.name))
        found = self._locate(sidecar)  # a link out of the folder is no sidecar
        given = None
        if found and found[0] is not None and sidecar.is_file():
            try:
                with sidecar.open("rb") as f:
                    given = f.read(MAX_SIDECAR_BYTES + 1)  # one byte past the limit at most
            except FileNotFoundError:
                given = None  # deleted meanwhile: its own event follows
        return dropped_metadata(file.name, data, given, where=path)

    def sync(self) -> None:
        """Catch up with changes made while the watcher was not running: the mirror first (so
        a file moved meanwhile keeps its document), then every file is taken (unchanged
        bytes add nothing)."""
        seen: dict[str, Path] = {}
        for folder in self.folders:
            for file in sorted(folder.path.rglob("*")):
                # A sidecar is read with its file, and is no document: a drop document at a
                # sidecar's path (kept before sidecars were read) is mirrored away.
                self._seen(file, seen)
        self._mirror(seen)
        for file in seen.values():
            self._safely(self.file_changed, file)

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
            self.changed(changes)
            if self._catch_up.is_set():
                self._serve_catch_up()
        self._ready.set()  # stopped before it was ever live: do not keep start() waiting
        self._caught_up.set()  # stopped: do not keep a catch-up waiting

    def _serve_catch_up(self) -> None:
        self._catch_up.clear()
        self._catch_up_error = None
        try:
            self.sync()
        except Exception as exc:
            self._catch_up_error = exc
        finally:
            self._caught_up.set()

    def catch_up(self, timeout: float = 600.0) -> None:
        """Catch up with what the live watch may have missed (an overflowed OS queue, a
        network folder), in the watch thread, and wait for it; raises what it raised."""
        if self._thread is None or not self._thread.is_alive():
            return
        self._caught_up.clear()
        self._catch_up.set()
        if not self._caught_up.wait(timeout=timeout):
            raise TimeoutError(f"the catch-up of the drop folder took over {timeout} s")
        if self._catch_up_error is not None:
            raise self._catch_up_error

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
