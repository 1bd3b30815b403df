"""The embedded SearchIndex: BM25 keywords and HNSW vectors per workspace, durable in SQLite.

Layout under `directory`: `index.db` (SQLite, WAL) is the durable truth for every entry
(analysed terms, float32 vector, ids, category). `vectors/<workspace hash>.{usearch,rows,json}`
are a workspace's saved graph, float16 rows and the database version they match: a cache,
rebuilt from `index.db` when missing, torn or older than the database (after a crash).
Graphs are saved by `flush()`/`close()` and, while writes continue, at most once a minute.

A workspace's engines (`WorkspaceEngines`) are loaded on first use and stay in memory; its
keyword index is rebuilt from the stored terms at load (seconds per 100k chunks). Every
workspace has its own engines, so another workspace's chunks can never come back, and BM25
statistics are the workspace's own.

Thread safety: every public method holds one re-entrant lock, so the server may call it
from any thread; searches are serialised, which costs little at ~1-3 ms each. One process
owns a directory at a time (the in-memory engines are not shared between processes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bunko.adapters.local.index_store import IndexStore, NewRow
from bunko.adapters.local.keyword_analysis import index_terms, query_terms
from bunko.adapters.local.vector_index import VectorIndex
from bunko.adapters.local.workspace_engines import WorkspaceEngines
from bunko.errors import ValidationError
from bunko.ports import IndexEntry, IndexHit, SearchFilter

log = logging.getLogger(__name__)

# Bump when keyword_analysis changes: stored terms of another version are unusable, so
# the index empties itself and the next `bunko reindex` / heal refills it.
ANALYZER_VERSION = "1"
# A graph with unsaved changes is saved at most this often while writes continue.
SAVE_INTERVAL_SECONDS = 60.0


class LocalSearchIndex:
    """SearchIndex for one machine. `dimension` may be None until the first vectors arrive."""

    def __init__(self, directory: Path, dimension: int | None = None) -> None:
        self.directory = Path(directory)
        (self.directory / "vectors").mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._store = IndexStore(self.directory / "index.db")
        self._workspaces: dict[str, WorkspaceEngines] = {}
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
        # Analysis is the slow part (~40 µs a chunk): done before taking the lock.
        analysed = [(entry, " ".join(index_terms(entry.text or ""))) for entry in entries]
        with self._lock:
            dimension = self.dimension
            by_workspace: dict[str, dict[str, NewRow]] = {}
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
                    terms,
                    vector,
                )
                # Keyed by chunk id: the last entry of a chunk in one batch wins.
                by_workspace.setdefault(entry.workspace_id, {})[entry.chunk_id] = row
            for workspace_id, rows in by_workspace.items():
                self._write(self._load(workspace_id), list(rows.values()), dimension)

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
            self._store.begin()
            try:
                self._store.delete_workspace(workspace_id)  # None: every workspace
                for target in targets:
                    self._store.bump_vector_seq(target)  # any saved graph is now stale
            except BaseException:
                self._store.rollback()
                raise
            self._store.commit()
            for target in targets:
                self._workspaces.pop(target, None)
                for path in self._graph_files(target):
                    path.unlink(missing_ok=True)

    def count(self, workspace_id: str | None = None) -> int:
        with self._lock:
            return self._store.count(workspace_id)

    def flush(self) -> None:
        """Save every loaded graph with unsaved changes."""
        with self._lock:
            for ws in self._workspaces.values():
                self._save(ws)

    def close(self) -> None:
        with self._lock:
            self.flush()
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
            if ws is None:
                return []
            hits = ws.keyword.search(terms, ws.allowed_mask(filters), limit)
            return [ws.hit(slot, score) for slot, score in hits]

    def vector_search(
        self, vector: Sequence[float], filters: SearchFilter, limit: int
    ) -> list[IndexHit]:
        """Cosine-similarity hits; a zero vector or an index without vectors → no hits."""
        query = self._query_vector(vector)
        if query is None or limit <= 0:
            return []
        with self._lock:
            ws = self._loaded_or_none(filters.workspace_id)
            if ws is None or ws.vectors is None:
                return []
            allowed = ws.allowed_vector_keys(filters)
            hits = ws.vectors.search(query, limit, allowed)
            return [ws.hit(ws.slot_of[key], score) for key, score in hits]

    def hybrid_search(
        self, query: str, vector: Sequence[float] | None, filters: SearchFilter, limit: int
    ) -> tuple[list[IndexHit], list[IndexHit]]:
        with self._lock:
            keyword = self.keyword_search(query, filters, limit)
            semantic = self.vector_search(vector, filters, limit) if vector is not None else []
            return keyword, semantic

    # --- internals ---

    def _query_vector(self, vector: Sequence[float] | None) -> np.ndarray | None:
        if vector is None or self.dimension is None:
            return None
        return _unit(vector, self.dimension, what="query")

    def _write(self, ws: WorkspaceEngines, rows: list[NewRow], dimension: int | None) -> None:
        has_vectors = any(row.vector is not None for row in rows)
        self._store.begin()
        try:
            if has_vectors and not self._dimension_stored:
                self._store.set_meta("dimension", str(dimension))
            old = self._store.delete(ws.workspace_id, chunk_ids=[row.chunk_id for row in rows])
            keys = [self._store.insert(row) for row in rows]
            if has_vectors or any(r.has_vector for r in old):
                self._store.bump_vector_seq(ws.workspace_id)
        except BaseException:
            self._store.rollback()
            raise
        self._store.commit()
        if has_vectors:
            self.dimension, self._dimension_stored = dimension, True
        self._apply(ws, lambda: ws.replace(old, keys, rows, self.dimension))

    def _delete(self, workspace_id: str, **where) -> None:
        ws = self._load(workspace_id)
        self._store.begin()
        try:
            old = self._store.delete(workspace_id, **where)
            if any(r.has_vector for r in old):
                self._store.bump_vector_seq(workspace_id)
        except BaseException:
            self._store.rollback()
            raise
        self._store.commit()
        if old:
            self._apply(ws, lambda: ws.replace(old, [], [], self.dimension))

    def _apply(self, ws: WorkspaceEngines, change) -> None:
        """Mirror a committed change in memory; if that fails, forget the workspace so it
        is reloaded from the database (which already has the change)."""
        try:
            change()
            if ws.needs_compaction():
                ws.rebuild_keywords(self._store)
            if ws.vectors is not None and ws.vectors.needs_compaction():
                ws.vectors.compact()
                ws.dirty_since = ws.dirty_since or time.monotonic()
        except BaseException:
            self._workspaces.pop(ws.workspace_id, None)
            raise
        if ws.dirty_since is not None and time.monotonic() - ws.dirty_since > SAVE_INTERVAL_SECONDS:
            self._save(ws)

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
        ws = WorkspaceEngines(workspace_id)
        ws.rebuild_keywords(self._store)
        if self.dimension is not None:
            ws.vectors = self._restore_graph(workspace_id)
        self._workspaces[workspace_id] = ws
        log.debug("loaded workspace %s index in %.2fs", workspace_id, time.monotonic() - started)
        return ws

    def _restore_graph(self, workspace_id: str) -> VectorIndex:
        assert self.dimension is not None
        graph_path, rows_path, sidecar = self._graph_files(workspace_id)
        try:
            saved = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved = None
        current = {"vector_seq": self._store.vector_seq(workspace_id), "dimension": self.dimension}
        if saved == current:
            graph = VectorIndex.restore(graph_path, rows_path, self.dimension)
            if graph is not None:
                return graph
        graph = VectorIndex(self.dimension)
        for keys, matrix in self._store.vectors(workspace_id, self.dimension):
            graph.add(keys, matrix)
        if len(graph):
            log.info("rebuilt the vector graph of workspace %s from the database", workspace_id)
        return graph

    def _save(self, ws: WorkspaceEngines) -> None:
        if ws.dirty_since is None or ws.vectors is None or self.dimension is None:
            return
        graph_path, rows_path, sidecar = self._graph_files(ws.workspace_id)
        sidecar.unlink(missing_ok=True)  # files and sidecar never disagree after a crash
        ws.vectors.save(graph_path, rows_path)
        current = {
            "vector_seq": self._store.vector_seq(ws.workspace_id),
            "dimension": self.dimension,
        }
        sidecar.write_text(json.dumps(current), encoding="utf-8")
        ws.dirty_since = None

    def _graph_files(self, workspace_id: str) -> tuple[Path, Path, Path]:
        """(graph, rows, sidecar) paths of a workspace's saved vector index."""
        stem = self.directory / "vectors" / hashlib.sha256(workspace_id.encode()).hexdigest()[:32]
        return stem.with_suffix(".usearch"), stem.with_suffix(".rows"), stem.with_suffix(".json")

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
