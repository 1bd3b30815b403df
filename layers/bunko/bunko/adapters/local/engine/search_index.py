"""The embedded SearchIndex: BM25 keywords and HNSW vectors per workspace, durable in SQLite.

Layout under `directory`: `index.db` (SQLite, WAL; `index_store`) is the durable truth for
every entry (analysed terms, float16 vector, ids, category), written first by every change.
`workspaces/<workspace hash>/` holds a workspace's snapshot (`workspace_snapshots`), which
reopening brings up to date from `index.db`, so a restart — after a crash too — re-analyses
nothing and rebuilds no graph.

Snapshots are written by `flush()`/`close()` and, while writes continue, once a minute or
once unsaved entries would take ~0.3 s to replay (`EngineTuning.save_rows`): that bounds
crash recovery.

Each workspace has its own engines (and BM25 statistics); one re-entrant lock guards every
public method. Another process's commits (`bunko ingest`, `reindex`) move SQLite's
data_version: the engines are then dropped and reopened from their snapshots."""

from __future__ import annotations

import hashlib
import logging
import shutil
import threading
import time
from collections.abc import Sequence
from concurrent.futures import wait
from pathlib import Path

from bunko.adapters.local.engine.index_store import IndexStore, NewRow
from bunko.adapters.local.engine.tuning import MEASURED, EngineTuning
from bunko.adapters.local.engine.unit_vectors import unit_rows, unit_vector
from bunko.adapters.local.engine.workspace_engines import Added, WorkspaceEngines
from bunko.adapters.local.engine.workspace_snapshots import open_snapshot, rebuild, save_snapshot
from bunko.domain.keyword_analysis import index_terms, query_terms
from bunko.errors import ValidationError
from bunko.ports import IndexEntry, IndexHit, SearchFilter

log = logging.getLogger(__name__)

# Bump when keyword_analysis changes: stored terms of another version are unusable, so
# the index empties itself and the next `bunko reindex` / heal refills it.
ANALYZER_VERSION = "1"


class LocalSearchIndex:
    """SearchIndex for one machine. `dimension` may be None until the first vectors arrive.
    Metadata filters arrive resolved to document ids (the metadata store indexes the terms,
    and an edit there needs no write here). `tuning`: the engine's knobs (tuning.py)."""

    filters_metadata = False

    def __init__(
        self, directory: Path, dimension: int | None = None, *, tuning: EngineTuning = MEASURED
    ) -> None:
        self.directory = Path(directory)
        self.tuning = tuning
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
        self._wait_for_graphs({entry.workspace_id for entry in entries}, len(entries))
        with self._lock:
            dimension = self.dimension
            for entry in entries:
                if entry.vector is not None:
                    dimension = dimension or len(entry.vector)
            vectors = unit_rows(entries, dimension)
            by_workspace: dict[str, dict[str, tuple[NewRow, list[str]]]] = {}
            for (entry, terms), vector in zip(analysed, vectors, strict=True):
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

    def relabel_document(
        self, workspace_id: str, document_id: str, metadata_terms: Sequence[str]
    ) -> None:
        """Nothing to do: see the class."""

    def clear(self, workspace_id: str | None = None) -> None:
        with self._lock:
            targets = [workspace_id] if workspace_id is not None else self._every_workspace()
            with self._store.transaction():
                self._store.delete_workspace(workspace_id)  # None: every workspace
                for target in targets:
                    self._store.bump_seq(target)
            for target in targets:
                self._forget(target)

    def count(self, workspace_id: str | None = None) -> int:
        with self._lock:
            return self._store.count(workspace_id)

    def chunk_ids(self, workspace_id: str) -> set[str]:
        """The chunk ids of the workspace's entries (what a background refinement diffs)."""
        with self._lock:
            return self._store.chunk_ids(workspace_id)

    def flush(self) -> None:
        """Save every loaded workspace with unsaved changes."""
        with self._lock:
            for ws in list(self._workspaces.values()):
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
        return self.hybrid_search(query, None, filters, limit)[0]

    def keyword_weight(self, query: str, filters: SearchFilter) -> float:
        """Σ idf of the query's terms in this workspace (see KeywordIndex.query_weight)."""
        terms = query_terms(query or "")
        with self._lock:
            ws = self._loaded_or_none(filters.workspace_id)
            return ws.keyword_weight(terms) if ws is not None and terms else 0.0

    def vector_search(
        self, vector: Sequence[float], filters: SearchFilter, limit: int
    ) -> list[IndexHit]:
        """Cosine-similarity hits; a zero vector or an index without vectors → no hits."""
        return self.hybrid_search("", vector, filters, limit)[1]

    def hybrid_search(
        self, query: str, vector: Sequence[float] | None, filters: SearchFilter, limit: int
    ) -> tuple[list[IndexHit], list[IndexHit]]:
        """Both legs at once (see WorkspaceEngines.hybrid_search)."""
        terms, unit = query_terms(query or ""), None
        if vector is not None and self.dimension is not None:
            unit = unit_vector(vector, self.dimension, what="query")
        if limit <= 0 or not (terms or unit is not None):
            return [], []
        with self._lock:
            ws = self._loaded_or_none(filters.workspace_id)
            return ([], []) if ws is None else ws.hybrid_search(terms, unit, filters, limit)

    # --- internals ---

    def _write(
        self, workspace_id: str, rows: list[tuple[NewRow, list[str]]], dimension: int | None
    ) -> None:
        ws = self._load(workspace_id)
        has_vectors = any(row.vector is not None for row, _ in rows)
        with self._store.transaction():
            if has_vectors and not self._dimension_stored:
                self._store.set_meta("dimension", str(dimension))
            seq = self._store.bump_seq(workspace_id)
            old = self._store.delete(workspace_id, seq=seq, chunk_ids=[r.chunk_id for r, _ in rows])
            keys = self._store.insert([row for row, _ in rows])
        if has_vectors:
            self.dimension, self._dimension_stored = dimension, True
        added = [
            Added(key, row.chunk_id, row.document_id, row.category, terms, row.vector)
            for key, (row, terms) in zip(keys, rows, strict=True)
        ]
        self._apply(ws, seq, old, added)

    def _wait_for_graphs(self, workspace_ids: set[str], rows: int) -> None:
        """Wait for graphs far behind the writes without the lock, so searches go on."""
        with self._lock:
            engines = [self._workspaces.get(w) for w in workspace_ids]
            backlogs = [f for ws in engines if ws and ws.vectors for f in ws.vectors.backlog(rows)]
        wait(backlogs)

    def _delete(self, workspace_id: str, **where) -> None:
        ws = self._load(workspace_id)
        with self._store.transaction():
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
        tuning = self.tuning
        due = max(tuning.save_rows, tuning.save_fraction * len(ws.columns))
        waited = time.monotonic() - (ws.dirty_since or time.monotonic())
        if unsaved >= due or waited > tuning.save_interval_seconds:
            self._save(ws)

    def _save(self, ws: WorkspaceEngines) -> None:
        if ws.dirty_since is None:
            return
        if self._changed_elsewhere() or self._workspaces.get(ws.workspace_id) is not ws:
            return  # these engines miss another process's writes: never save them as current
        save_snapshot(ws)
        self._store.prune_deleted(ws.workspace_id, ws.seq)
        self._unsaved[ws.workspace_id] = 0

    def _changed_elsewhere(self) -> bool:
        """Another process committed to index.db: drop the engines, to reopen and replay."""
        if changed := self._store.changed_elsewhere():
            for ws in self._workspaces.values():
                ws.close()
            self._workspaces.clear()
            self._unsaved.clear()
        return changed

    def _loaded_or_none(self, workspace_id: str) -> WorkspaceEngines | None:
        self._changed_elsewhere()
        if workspace_id in self._workspaces:
            return self._workspaces[workspace_id]
        if self._store.count(workspace_id) == 0:
            return None  # do not keep empty engines for every workspace ever asked about
        return self._load(workspace_id)

    def _load(self, workspace_id: str) -> WorkspaceEngines:
        self._changed_elsewhere()
        ws = self._workspaces.get(workspace_id)
        if ws is not None:
            return ws
        started = time.monotonic()
        folder = self._folder(workspace_id)
        opened = open_snapshot(
            self._store, workspace_id, folder, self.dimension, tuning=self.tuning
        )
        if opened is None:
            ws, how = self._rebuild(workspace_id), "rebuilt from the database"
        else:
            ws, self._unsaved[workspace_id] = opened
            how = f"opened, {opened[1]} entries replayed"
        self._workspaces[workspace_id] = ws
        took = time.monotonic() - started
        log.info(
            "index of workspace %s: %d slots %s in %.2f s", workspace_id, len(ws.columns), how, took
        )
        return ws

    def _rebuild(self, workspace_id: str) -> WorkspaceEngines:
        """The workspace's engines built afresh from the database (and saved)."""
        self._forget(workspace_id)
        folder = self._folder(workspace_id)
        ws = rebuild(self._store, workspace_id, folder, self.dimension, tuning=self.tuning)
        if len(ws.columns):
            self._save(ws)
        return ws

    def _forget(self, workspace_id: str) -> None:
        ws = self._workspaces.pop(workspace_id, None)
        if ws is not None:
            ws.close()
        self._unsaved.pop(workspace_id, None)
        shutil.rmtree(self._folder(workspace_id), ignore_errors=True)

    def _every_workspace(self) -> list[str]:
        return sorted({*self._store.workspaces(), *self._workspaces})

    def _folder(self, workspace_id: str) -> Path:
        digest = hashlib.sha256(workspace_id.encode()).hexdigest()[:32]
        return self.directory / "workspaces" / digest

    def _check_analyzer(self) -> None:
        stored = self._store.get_meta("analyzer")
        if stored is not None and stored != ANALYZER_VERSION:  # its terms are unusable
            log.warning(
                "keyword analysis changed (v%s → v%s): the index is emptied and must be "
                "rebuilt (bunko reindex)",
                stored,
                ANALYZER_VERSION,
            )
            self.clear()
        self._store.set_meta("analyzer", ANALYZER_VERSION)
