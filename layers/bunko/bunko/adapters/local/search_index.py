"""The embedded SearchIndex: BM25 keywords and HNSW vectors per workspace, durable in SQLite.

Layout under `directory`: `index.db` (SQLite, WAL) is the durable truth for every entry
(analysed terms, float16 vector, ids, category), written first by every change.
`workspaces/<workspace hash>/` holds a workspace's snapshot (`workspace_engines`): keyword
segments, vector rows, HNSW graph and slot columns, opened by memory map. Reopening loads
the snapshot and replays what it missed from `index.db` (entries with larger keys,
tombstones with larger change numbers), so a restart — after a crash too — re-analyses
nothing and rebuilds no graph. A missing or torn snapshot is rebuilt from `index.db`.

Snapshots are written by `flush()`/`close()` and, while writes continue, once a minute or
once the unsaved entries would take more than ~0.3 s to replay (SAVE_ROWS), whichever
comes first: that bounds recovery after a crash.

Every workspace has its own engines, so another workspace's chunks can never come back, and
BM25 statistics are the workspace's own.

Thread safety: every public method holds one re-entrant lock, so the server may call it
from any thread; searches are serialised, which costs little at ~1-3 ms each. One process
owns a directory at a time (the in-memory engines are not shared between processes).
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from bunko.adapters.local.index_store import IndexStore, NewRow, Row, decode_vector
from bunko.adapters.local.keyword_analysis import index_terms, query_terms
from bunko.adapters.local.workspace_engines import Added, WorkspaceEngines
from bunko.errors import ValidationError
from bunko.ports import IndexEntry, IndexHit, SearchFilter

log = logging.getLogger(__name__)

# Bump when keyword_analysis changes: stored terms of another version are unusable, so
# the index empties itself and the next `bunko reindex` / heal refills it.
ANALYZER_VERSION = "1"
# A workspace with unsaved changes is saved at most this often while writes continue...
SAVE_INTERVAL_SECONDS = 60.0
# ... or once this many entries (or this fraction of the workspace) wait to be replayed.
SAVE_ROWS = 20_000
SAVE_FRACTION = 0.05
REPLAY_BATCH = 4096


class LocalSearchIndex:
    """SearchIndex for one machine. `dimension` may be None until the first vectors arrive."""

    def __init__(self, directory: Path, dimension: int | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.directory / "vectors", ignore_errors=True)  # the old layout
        self._lock = threading.RLock()
        self._store = IndexStore(self.directory / "index.db")
        self._workspaces: dict[str, WorkspaceEngines] = {}
        self._unsaved: dict[str, int] = {}
        stored = self._store.get_meta("dimension")
        if stored is not None and dimension is not None and int(stored) != dimension:
            raise ValidationError(
                f"the index at {self.directory.name} holds {stored}-dimensional vectors, "
                f"not {dimension}: use another index directory for this embedding model"
            )
        self.dimension: int | None = int(stored) if stored is not None else dimension
        self._dimension_stored = stored is not None
        self._check_analyzer()

    # --- writes ---

    def index(self, entries: Sequence[IndexEntry]) -> None:
        """Add or replace entries by (workspace, chunk id); idempotent. Raises
        ValidationError (and writes nothing) if a vector has the wrong dimension."""
        # Analysis is the slow part (~30 µs a chunk): done before taking the lock.
        analysed = [(entry, index_terms(entry.text or "")) for entry in entries]
        with self._lock:
            dimension = self.dimension
            by_workspace: dict[str, dict[str, tuple[NewRow, list[str]]]] = {}
            for entry, terms in analysed:
                vector = None
                if entry.vector is not None:
                    vector = _unit(entry.vector, dimension, what=f"chunk {entry.chunk_id}")
                    dimension = dimension or len(entry.vector)
                row = NewRow(
                    entry.workspace_id,
                    entry.chunk_id,
                    entry.document_id,
                    entry.revision,
                    entry.category,
                    " ".join(terms),
                    vector,
                )
                # Keyed by chunk id: the last entry of a chunk in one batch wins.
                by_workspace.setdefault(entry.workspace_id, {})[entry.chunk_id] = (row, terms)
            for workspace_id, rows in by_workspace.items():
                self._write(workspace_id, list(rows.values()), dimension)

    def delete_document(self, workspace_id: str, document_id: str) -> None:
        with self._lock:
            self._delete(workspace_id, document_id=document_id)

    def delete_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> None:
        with self._lock:
            self._delete(workspace_id, chunk_ids=list(chunk_ids))

    def clear(self, workspace_id: str | None = None) -> None:
        with self._lock:
            if workspace_id is not None:
                targets = [workspace_id]
            else:
                targets = sorted({*self._store.workspaces(), *self._workspaces})
            with self._transaction():
                self._store.delete_workspace(workspace_id)  # None: every workspace
                for target in targets:
                    self._store.bump_seq(target)
            for target in targets:
                self._forget(target)

    def count(self, workspace_id: str | None = None) -> int:
        with self._lock:
            return self._store.count(workspace_id)

    def flush(self) -> None:
        """Save every loaded workspace with unsaved changes."""
        with self._lock:
            for ws in self._workspaces.values():
                self._save(ws)

    def close(self) -> None:
        with self._lock:
            self.flush()
            for ws in self._workspaces.values():
                ws.close()
            self._workspaces.clear()
            self._store.close()

    # --- reads ---

    def keyword_search(self, query: str, filters: SearchFilter, limit: int) -> list[IndexHit]:
        """BM25 hits (higher is better); no terms in the query → no hits."""
        terms = query_terms(query or "")
        if not terms or limit <= 0:
            return []
        with self._lock:
            ws = self._loaded_or_none(filters.workspace_id)
            return [] if ws is None else ws.keyword_search(terms, filters, limit)

    def vector_search(
        self, vector: Sequence[float], filters: SearchFilter, limit: int
    ) -> list[IndexHit]:
        """Cosine-similarity hits; a zero vector or an index without vectors → no hits."""
        query = None if self.dimension is None else _unit(vector, self.dimension, what="query")
        if query is None or limit <= 0:
            return []
        with self._lock:
            ws = self._loaded_or_none(filters.workspace_id)
            return [] if ws is None else ws.vector_search(query, filters, limit)

    def hybrid_search(
        self, query: str, vector: Sequence[float] | None, filters: SearchFilter, limit: int
    ) -> tuple[list[IndexHit], list[IndexHit]]:
        with self._lock:
            keyword = self.keyword_search(query, filters, limit)
            semantic = self.vector_search(vector, filters, limit) if vector is not None else []
            return keyword, semantic

    # --- internals ---

    def _transaction(self):
        return _Transaction(self._store)

    def _write(
        self, workspace_id: str, rows: list[tuple[NewRow, list[str]]], dimension: int | None
    ) -> None:
        ws = self._load(workspace_id)
        has_vectors = any(row.vector is not None for row, _ in rows)
        with self._transaction():
            if has_vectors and not self._dimension_stored:
                self._store.set_meta("dimension", str(dimension))
            seq = self._store.bump_seq(workspace_id)
            old = self._store.delete(workspace_id, seq=seq, chunk_ids=[r.chunk_id for r, _ in rows])
            keys = [self._store.insert(row) for row, _ in rows]
        if has_vectors:
            self.dimension, self._dimension_stored = dimension, True
        added = [
            Added(key, row.chunk_id, row.document_id, row.category, terms, row.vector)
            for key, (row, terms) in zip(keys, rows, strict=True)
        ]
        self._apply(ws, seq, old, added)

    def _delete(self, workspace_id: str, **where) -> None:
        ws = self._load(workspace_id)
        with self._transaction():
            seq = self._store.bump_seq(workspace_id)
            old = self._store.delete(workspace_id, seq=seq, **where)
        self._apply(ws, seq, old, [])

    def _apply(self, ws: WorkspaceEngines, seq: int, old: list[int], added: list[Added]) -> None:
        """Mirror a committed change in memory; if that fails, forget the workspace so it
        is reloaded from the database (which already has the change)."""
        try:
            ws.remove(old)
            ws.add(added, self.dimension)
            ws.seq = seq
            unsaved = self._unsaved.get(ws.workspace_id, 0) + len(old) + len(added)
            self._unsaved[ws.workspace_id] = unsaved
            if ws.needs_compaction():
                self._workspaces[ws.workspace_id] = self._rebuild(ws.workspace_id)
                return
        except BaseException:
            self._workspaces.pop(ws.workspace_id, None)
            raise
        due = max(SAVE_ROWS, SAVE_FRACTION * len(ws.columns))
        waited = time.monotonic() - (ws.dirty_since or time.monotonic())
        if unsaved >= due or waited > SAVE_INTERVAL_SECONDS:
            self._save(ws)

    def _save(self, ws: WorkspaceEngines) -> None:
        if ws.dirty_since is None:
            return
        ws.save()
        self._store.prune_deleted(ws.workspace_id, ws.seq)
        self._unsaved[ws.workspace_id] = 0

    def _loaded_or_none(self, workspace_id: str) -> WorkspaceEngines | None:
        if workspace_id in self._workspaces:
            return self._workspaces[workspace_id]
        if self._store.count(workspace_id) == 0:
            return None  # do not keep empty engines for every workspace ever asked about
        return self._load(workspace_id)

    def _load(self, workspace_id: str) -> WorkspaceEngines:
        ws = self._workspaces.get(workspace_id)
        if ws is not None:
            return ws
        started = time.monotonic()
        try:
            ws = WorkspaceEngines.load(workspace_id, self._folder(workspace_id), self.dimension)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            if (self._folder(workspace_id) / "manifest.json").exists():
                log.warning("rebuilding the index of workspace %s: %s", workspace_id, exc)
            ws = self._rebuild(workspace_id)
        else:
            ws.remove(self._store.deleted_since(workspace_id, ws.seq))
            # The replayed vectors stay in the pending tail (ranked exactly): putting them in
            # the graph would cost ~0.1 ms each now; the next write does it.
            rows = self._store.rows(workspace_id, after=ws.max_key)
            replayed = self._add_rows(ws, rows, drain=False)
            self._unsaved[workspace_id] = replayed
            ws.seq = self._store.seq(workspace_id)
        self._workspaces[workspace_id] = ws
        log.debug("loaded workspace %s index in %.2fs", workspace_id, time.monotonic() - started)
        return ws

    def _rebuild(self, workspace_id: str) -> WorkspaceEngines:
        """The workspace's engines built afresh from the database (and saved)."""
        self._forget(workspace_id)
        ws = WorkspaceEngines(workspace_id, self._folder(workspace_id))
        ws.seq = self._store.seq(workspace_id)
        if self._add_rows(ws, self._store.rows(workspace_id)):
            self._save(ws)
        return ws

    def _add_rows(self, ws: WorkspaceEngines, rows: Iterable[Row], *, drain: bool = True) -> int:
        batch: list[Added] = []
        count = 0
        for row in rows:
            vector = None
            if row.vector is not None and self.dimension is not None:
                vector = decode_vector(row.vector, self.dimension)
            terms = row.terms.split()
            batch.append(Added(row.key, row.chunk_id, row.document_id, row.category, terms, vector))
            if len(batch) == REPLAY_BATCH:
                ws.add(batch, self.dimension, drain=drain)
                count, batch = count + len(batch), []
        ws.add(batch, self.dimension, drain=drain)
        return count + len(batch)

    def _forget(self, workspace_id: str) -> None:
        ws = self._workspaces.pop(workspace_id, None)
        if ws is not None:
            ws.close()
        self._unsaved.pop(workspace_id, None)
        shutil.rmtree(self._folder(workspace_id), ignore_errors=True)

    def _folder(self, workspace_id: str) -> Path:
        digest = hashlib.sha256(workspace_id.encode()).hexdigest()[:32]
        return self.directory / "workspaces" / digest

    def _check_analyzer(self) -> None:
        version = self._store.get_meta("analyzer")
        if version == ANALYZER_VERSION:
            return
        if version is not None:
            log.warning(
                "keyword analysis changed (v%s → v%s): the index is emptied and "
                "must be rebuilt (bunko reindex)",
                version,
                ANALYZER_VERSION,
            )
            self.clear()
        self._store.set_meta("analyzer", ANALYZER_VERSION)


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error."""

    def __init__(self, store: IndexStore) -> None:
        self._store = store

    def __enter__(self) -> None:
        self._store.begin()

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self._store.commit()
        else:
            self._store.rollback()


def _unit(values: Sequence[float], dimension: int | None, *, what: str) -> np.ndarray | None:
    """A float32 unit vector; None for an all-zero vector (it has no direction)."""
    vector = np.asarray(values, dtype=np.float32).reshape(-1)
    if dimension is not None and vector.shape[0] != dimension:
        raise ValidationError(
            f"{what}: the vector has {vector.shape[0]} dimensions but the index holds "
            f"{dimension}-dimensional vectors"
        )
    if not np.all(np.isfinite(vector)):
        raise ValidationError(f"{what}: the vector has NaN or infinite values")
    norm = float(np.linalg.norm(vector))
    return None if norm == 0.0 else vector / norm
