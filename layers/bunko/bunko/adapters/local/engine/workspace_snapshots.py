"""A workspace's engines on disk (its snapshot), and bringing them up again: from the
snapshot plus what it missed, or rebuilt from the database when there is no usable one.

A snapshot is a directory of immutable files and one `manifest.json` naming them, with the
store's change counter (`seq`) and the largest entry key it covers. Files get fresh names
and the manifest is renamed into place last, so a crash at any point leaves either the old
snapshot or the new one; files no manifest names are removed at the next save.

Opening loads the snapshot (keyword segments, vector rows, HNSW graph and slot columns, by
memory map) and replays what it missed from the store: entries with larger keys, tombstones
with larger change numbers. A missing or torn snapshot is rebuilt from the store.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path

from bunko.adapters.local.engine.index_store import IndexStore, Row, decode_vector
from bunko.adapters.local.engine.keyword_index import KeywordIndex
from bunko.adapters.local.engine.slot_columns import SlotColumns
from bunko.adapters.local.engine.tuning import EngineTuning
from bunko.adapters.local.engine.vector_index import VectorIndex
from bunko.adapters.local.engine.workspace_engines import Added, WorkspaceEngines

log = logging.getLogger(__name__)

FORMAT = 1
MANIFEST = "manifest.json"
REPLAY_BATCH = 4096


def save_snapshot(ws: WorkspaceEngines) -> None:
    """Write a snapshot of the workspace's current state (which matches store seq `ws.seq`)."""
    ws.directory.mkdir(parents=True, exist_ok=True)
    keyword = ws.keyword.save(ws.directory, ws.new_name)
    vectors = None if ws.vectors is None else ws.vectors.save(ws.directory, ws.new_name)
    columns = ws.columns.save(ws.directory, ws.new_name)
    manifest = {
        "format": FORMAT,
        "seq": ws.seq,
        "max_key": ws.max_key,
        "slots": len(ws.columns),
        "next_name": ws.next_name,
        "columns": columns,
        "keyword": keyword,
        "vectors": vectors,
    }
    tmp = ws.directory / (MANIFEST + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        json.dump(manifest, out)
        out.flush()
        os.fsync(out.fileno())
    tmp.replace(ws.directory / MANIFEST)
    keep = {MANIFEST, columns, *ws.keyword.files(keyword)}
    keep |= set(VectorIndex.files(vectors)) if vectors else set()
    for path in ws.directory.iterdir():
        if path.name not in keep:
            path.unlink(missing_ok=True)
    ws.dirty_since = None


def load_snapshot(
    workspace_id: str, directory: Path, dimension: int | None, *, tuning: EngineTuning
) -> WorkspaceEngines:
    """The saved snapshot; raises (OSError, ValueError, ...) when there is none or it is
    torn or of another dimension."""
    manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    if manifest["format"] != FORMAT:
        raise ValueError("another snapshot format")
    ws = WorkspaceEngines(workspace_id, directory, tuning=tuning)
    ws.seq, ws.max_key = manifest["seq"], manifest["max_key"]
    ws.next_name = manifest["next_name"]
    ws.columns = SlotColumns.load(directory / manifest["columns"])
    live, pending = ws.columns.live_mask(), tuning.pending_postings
    ws.keyword = KeywordIndex.load(directory, manifest["keyword"], live, pending_postings=pending)
    if manifest["vectors"] is not None:
        if dimension is None:
            raise ValueError("a snapshot with vectors, an index without a dimension")
        ws.vectors = VectorIndex.load(directory, manifest["vectors"], dimension, tuning=tuning)
        if ws.vectors.sketches_computed:
            ws.dirty_since = time.monotonic()  # save them once, not at every start
    slots = {manifest["slots"], len(ws.columns), ws.keyword.slot_count}
    if ws.vectors is not None:
        slots.add(ws.vectors.rows.count)
    if len(slots) != 1:
        raise ValueError("the snapshot's parts disagree")
    return ws


def open_snapshot(
    store: IndexStore,
    workspace_id: str,
    folder: Path,
    dimension: int | None,
    *,
    tuning: EngineTuning,
) -> tuple[WorkspaceEngines, int] | None:
    """The saved engines brought up to date, and how many entries were replayed; None when
    there is no usable snapshot."""
    try:
        ws = load_snapshot(workspace_id, folder, dimension, tuning=tuning)
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
    store: IndexStore,
    workspace_id: str,
    folder: Path,
    dimension: int | None,
    *,
    tuning: EngineTuning,
) -> WorkspaceEngines:
    """Engines built afresh from every entry in the database (`folder` must be empty)."""
    ws = WorkspaceEngines(workspace_id, folder, tuning=tuning)
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
