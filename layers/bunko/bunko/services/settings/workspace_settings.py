"""WorkspaceSettingsService: TelosDB's /settings — watched folders and search defaults.

Fields: `monitor_paths` (folders whose files are ingested, each with an optional
category), `min_score` and `limit` (search_text defaults), `run_on_login` (a desktop
client's preference, kept for it). Saving notifies subscribers at once, so the folder
monitor and the search defaults change without a restart.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bunko.domain.drop_routes import MAX_SUBFOLDERS, DropRoutes, check_subfolder
from bunko.errors import PermissionDeniedError, ValidationError
from bunko.ports import SettingsStore
from bunko.services.bounds import RESULTS
from bunko.services.settings.drop_routes import DROP_OWNER, DROP_SCOPE, read_drop_routes

SCOPE = "workspace"
MAX_FOLDERS = 32

log = logging.getLogger(__name__)

# Checks a folder may be watched and returns its canonical form; raises ValidationError.
FolderCheck = Callable[[str], str]


@dataclass(frozen=True)
class MonitoredFolder:
    workspace_id: str
    path: str
    category: str | None = None


def _no_folders(path: str) -> str:
    raise ValidationError("monitor_paths: folder monitoring needs the embedded server")


class WorkspaceSettingsService:
    def __init__(
        self,
        store: SettingsStore,
        *,
        min_score: float,
        limit: int,
        folder_check: FolderCheck | None = None,
    ) -> None:
        self.store = store
        self.defaults: dict[str, Any] = {
            "monitor_paths": [],
            "run_on_login": False,
            "min_score": min_score,
            "limit": limit,
        }
        self.folder_check = folder_check or _no_folders
        self._subscribers: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def get(self, workspace_id: str) -> dict[str, Any]:
        stored = self.store.get_settings(SCOPE, workspace_id) or {}
        return {**self.defaults, **{k: v for k, v in stored.items() if k in self.defaults}}

    def search_defaults(self, workspace_id: str) -> tuple[int, float]:
        saved = self.get(workspace_id)
        return int(saved["limit"]), float(saved["min_score"])

    def update(
        self, workspace_id: str, changes: dict[str, Any], *, may_watch_folders: bool
    ) -> dict[str, Any]:
        """Validate and merge a partial update; returns the whole settings."""
        unknown = set(changes) - set(self.defaults)
        if unknown:
            raise ValidationError(f"unknown fields: {', '.join(sorted(unknown))}")
        clean = dict(changes)
        if "monitor_paths" in clean:
            if not may_watch_folders:
                raise PermissionDeniedError("only an admin may change monitor_paths")
            clean["monitor_paths"] = self._folders(clean["monitor_paths"])
        if "min_score" in clean:
            value = clean["min_score"]
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValidationError("min_score: a number between 0 and 1")
        if "limit" in clean:
            value = clean["limit"]
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= RESULTS:
                raise ValidationError(f"limit: an integer between 1 and {RESULTS}")
        if "run_on_login" in clean and not isinstance(clean["run_on_login"], bool):
            raise ValidationError("run_on_login: true or false")
        with self._lock:
            values = {**self.get(workspace_id), **clean}
            self.store.put_settings(SCOPE, workspace_id, values)
        self._notify()
        return values

    def drop_library(self, default: str) -> str:
        """The workspace the drop folder fills: the one an admin chose, else `default`."""
        return self.drop_routes().folder_library(default)

    def drop_routes(self) -> DropRoutes:
        return read_drop_routes(self.store)

    def point_drop_folder(self, workspace_id: str) -> None:
        """Make the drop folder fill `workspace_id` (the caller checked who may); the folder
        monitor moves at once. Files dropped earlier stay in the library they went to;
        mapped sub-folders keep their libraries."""
        with self._lock:
            routes = self.drop_routes()
            chosen = DropRoutes(library=workspace_id, subfolders=routes.subfolders)
            self.store.put_settings(DROP_SCOPE, DROP_OWNER, chosen.record())
        self._notify()

    def point_drop_subfolder(self, name: str, workspace_id: str | None) -> str:
        """Make the drop folder's sub-folder `name` fill `workspace_id` (None: the folder's
        library again); returns the name as kept. The library it fills now takes its files;
        the folder's library lets them go when a sub-folder is mapped away from it, and a
        library a sub-folder stops filling keeps what it had (as when the folder moves)."""
        name = check_subfolder(name)
        with self._lock:
            routes = self.drop_routes()
            subfolders = {k: v for k, v in routes.subfolders.items() if k != name}
            if workspace_id is not None:
                if len(subfolders) >= MAX_SUBFOLDERS:
                    raise ValidationError(f"subfolder: at most {MAX_SUBFOLDERS} are mapped")
                subfolders[name] = workspace_id
            chosen = DropRoutes(library=routes.library, subfolders=subfolders)
            self.store.put_settings(DROP_SCOPE, DROP_OWNER, chosen.record())
        self._notify()
        return name

    def monitored_folders(self) -> list[MonitoredFolder]:
        """Every workspace's watched folders."""
        return [
            MonitoredFolder(workspace_id, f["path"], f.get("category"))
            for workspace_id, values in self.store.list_settings(SCOPE)
            for f in values.get("monitor_paths", [])
        ]

    def subscribe(self, callback: Callable[[], None]) -> None:
        self._subscribers.append(callback)

    def _notify(self) -> None:
        for callback in list(self._subscribers):
            try:
                callback()
            except Exception:  # a failing listener must not fail the save
                log.exception("settings listener failed")

    def _folders(self, value: Any) -> list[dict[str, Any]]:
        if not isinstance(value, list) or len(value) > MAX_FOLDERS:
            raise ValidationError(f"monitor_paths: a list of at most {MAX_FOLDERS} folders")
        folders: dict[str, dict[str, Any]] = {}
        for entry in value:
            # TelosDB clients send plain strings; Bunko's own objects carry a category.
            item = {"path": entry} if isinstance(entry, str) else entry
            if not isinstance(item, dict) or not isinstance(item.get("path"), str):
                raise ValidationError("monitor_paths: each entry is a path or {path, category}")
            category = item.get("category")
            if category is not None and (not isinstance(category, str) or len(category) > 200):
                raise ValidationError("monitor_paths: category must be a string")
            path = self.folder_check(item["path"])
            folders[path] = {"path": path, "category": category or None}
        return list(folders.values())
