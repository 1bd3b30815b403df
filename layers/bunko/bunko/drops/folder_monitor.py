"""FolderMonitor: the drop folder (and its sub-folders mapped to other libraries) plus every
workspace's `monitor_paths`, watched live.

One DropFolderWatcher per workspace (a watcher's catch-up sync owns every dropped
document of its workspace, so two watchers in one workspace would undo each other).
When /settings saves new folders, the watchers are rebuilt at once: no restart needed.
A monitored folder's documents get its absolute path as their path prefix, so two
folders holding `notes.txt` stay two documents.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from bunko.drops.folder_watcher import DropFolderWatcher, WatchedFolder
from bunko.services.ingest import IngestService
from bunko.services.settings import WorkspaceSettingsService

log = logging.getLogger(__name__)


class FolderMonitor:
    def __init__(
        self,
        ingest: IngestService,
        settings: WorkspaceSettingsService,
        *,
        drop_dir: Path | None,
        drop_workspace_id: str,
        reload_soon: Callable[[], None] | None = None,
    ) -> None:
        """`reload_soon`: how a change of settings asks for `reload_now` off the request
        thread (the embedded server's scheduler wakes its job); by default a thread."""
        self.ingest = ingest
        self.reload_soon = reload_soon
        self.settings = settings
        self.drop_dir = drop_dir
        self.drop_workspace_id = drop_workspace_id
        self._watchers: list[DropFolderWatcher] = []
        self._lock = threading.Lock()
        self._started = False
        settings.subscribe(self._reload)

    def folders(self) -> dict[str, list[WatchedFolder]]:
        """Workspace id → the folders to watch for it."""
        by_workspace: dict[str, list[WatchedFolder]] = {}
        if self.drop_dir is not None:
            # the library an admin pointed it at (Users → Drop folder), else the default one;
            # each mapped sub-folder fills its own (services/settings/drop_routes.py)
            routes = self.settings.drop_routes()
            mapped = {
                name: workspace_id
                for name, workspace_id in routes.subfolders.items()
                if self.ingest.has_workspace(workspace_id)  # a deleted library maps nothing
            }
            target = routes.folder_library(self.drop_workspace_id)
            by_workspace[target] = [WatchedFolder(self.drop_dir, skip=frozenset(mapped))]
            for name, workspace_id in sorted(mapped.items()):
                # the path and category it would have had unmapped: only the library changes
                sub = WatchedFolder(self.drop_dir / name, category=name, prefix=name)
                by_workspace.setdefault(workspace_id, []).append(sub)
        for f in self.settings.monitored_folders():
            if not Path(f.path).is_dir():
                log.warning("monitored folder %s is gone; skipping it", f.path)
                continue
            prefix = f.path.lstrip("/")
            by_workspace.setdefault(f.workspace_id, []).append(
                WatchedFolder(Path(f.path), category=f.category, prefix=prefix)
            )
        return by_workspace

    def start(self) -> None:
        with self._lock:
            self._started = True
            self._start_watchers()

    def stop(self) -> None:
        with self._lock:
            self._started = False
            self._stop_watchers()

    def catch_up(self) -> None:
        """Each watcher's catch-up (DropFolderWatcher.catch_up), one after another; the
        first failure is raised once every watcher had its turn."""
        with self._lock:
            watchers = list(self._watchers)
        failed: Exception | None = None
        for watcher in watchers:
            try:
                watcher.catch_up()
            except Exception as exc:
                log.exception("catching up with %s failed", [str(f.path) for f in watcher.folders])
                failed = failed or exc
        if failed is not None:
            raise failed

    def _reload(self) -> None:
        # Off the request thread: a new folder's catch-up sync reads every file in it.
        if self.reload_soon is not None:
            self.reload_soon()
            return
        threading.Thread(target=self.reload_now, name="bunko-watch-reload", daemon=True).start()

    def reload_now(self) -> None:
        with self._lock:
            if not self._started:
                return
            self._stop_watchers()
            self._start_watchers()
        log.info("watched folders reloaded")

    def _start_watchers(self) -> None:
        for workspace_id, folders in self.folders().items():
            watcher = DropFolderWatcher(self.ingest, workspace_id, folders)
            watcher.start()
            self._watchers.append(watcher)

    def _stop_watchers(self) -> None:
        for watcher in self._watchers:
            watcher.stop()
        self._watchers = []
