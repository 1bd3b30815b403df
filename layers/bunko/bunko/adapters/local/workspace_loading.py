"""Bringing a workspace's engines up: from its snapshot plus what the snapshot missed, or
rebuilt from the database when there is no usable snapshot."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from bunko.adapters.local.index_store import IndexStore, Row, decode_vector
from bunko.adapters.local.workspace_engines import MANIFEST, Added, WorkspaceEngines

log = logging.getLogger(__name__)

REPLAY_BATCH = 4096


def open_snapshot(
    store: IndexStore, workspace_id: str, folder: Path, dimension: int | None
) -> tuple[WorkspaceEngines, int] | None:
    """The saved engines brought up to date, and how many entries were replayed; None when
    there is no usable snapshot."""
    try:
        ws = WorkspaceEngines.load(workspace_id, folder, dimension)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        if (folder / MANIFEST).exists():
            log.warning("rebuilding the index of workspace %s: %s", workspace_id, exc)
        return None
    ws.remove(store.deleted_since(workspace_id, ws.seq))
    # The replayed vectors stay in the pending tail (ranked exactly): putting them in the
    # graph would cost ~0.1 ms each now; the next write does it.
    replayed = add_rows(ws, store.rows(workspace_id, after=ws.max_key), dimension, drain=False)
    ws.seq = store.seq(workspace_id)
    return ws, replayed


def rebuild(
    store: IndexStore, workspace_id: str, folder: Path, dimension: int | None
) -> WorkspaceEngines:
    """Engines built afresh from every entry in the database (`folder` must be empty)."""
    ws = WorkspaceEngines(workspace_id, folder)
    ws.seq = store.seq(workspace_id)
    add_rows(ws, store.rows(workspace_id), dimension)
    return ws


def add_rows(
    ws: WorkspaceEngines, rows: Iterable[Row], dimension: int | None, *, drain: bool = True
) -> int:
    batch: list[Added] = []
    count = 0
    for row in rows:
        vector = None
        if row.vector is not None and dimension is not None:
            vector = decode_vector(row.vector, dimension)
        terms = row.terms.split()
        batch.append(Added(row.key, row.chunk_id, row.document_id, row.category, terms, vector))
        if len(batch) == REPLAY_BATCH:
            ws.add(batch, dimension, drain=drain)
            count, batch = count + len(batch), []
    ws.add(batch, dimension, drain=drain)
    return count + len(batch)


def analyzer_changed(stored: str | None, current: str) -> bool:
    """True (and logged) when the index holds terms of another keyword analysis."""
    if stored is None or stored == current:
        return False
    log.warning(
        "keyword analysis changed (v%s → v%s): the index is emptied and must be rebuilt "
        "(bunko reindex)",
        stored,
        current,
    )
    return True
