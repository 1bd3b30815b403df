"""The drop folder's routes, kept in the settings store: one record for the server, read by
every shape's drop (the folder monitor, the ingest function). What they mean:
domain/drop_routes.py."""

from __future__ import annotations

from bunko.domain.drop_routes import DropRoutes
from bunko.ports import SettingsStore

DROP_SCOPE, DROP_OWNER = "server", "drop-folder"


def read_drop_routes(store: SettingsStore) -> DropRoutes:
    saved = store.get_settings(DROP_SCOPE, DROP_OWNER) or {}
    library = saved.get("workspace_id")
    subfolders = saved.get("subfolders")
    if not isinstance(subfolders, dict):
        subfolders = {}
    return DropRoutes(
        library=library if isinstance(library, str) and library else None,
        subfolders={str(k): v for k, v in subfolders.items() if isinstance(v, str) and v},
    )
