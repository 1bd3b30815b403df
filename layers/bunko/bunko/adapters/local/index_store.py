"""The local search index's durable half: one SQLite file (WAL) holding every entry.

Each row keeps what the in-memory engines need to be rebuilt: the chunk's analysed terms
(not its text: the metadata store has that) and its vector as float32 bytes. `key` is the
engine-side id (usearch key); the chunk id is an ordinary column, unique per workspace, as
in a cloud index where the engine assigns its own ids (DESIGN decision 2).

`vector_seq` counts a workspace's vector changes; a saved HNSW graph records the value it
was saved at, so a graph that missed later writes (a crash) is detected and rebuilt.
The caller serialises access (one connection, used under the index's lock).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
  key INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id TEXT NOT NULL,
  chunk_id TEXT NOT NULL,
  document_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  category TEXT,
  terms TEXT NOT NULL,
  vector BLOB,
  UNIQUE (workspace_id, chunk_id)
);
CREATE INDEX IF NOT EXISTS entries_document ON entries (workspace_id, document_id);
CREATE TABLE IF NOT EXISTS workspaces (
  workspace_id TEXT PRIMARY KEY,
  vector_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True)
class Row:
    key: int
    chunk_id: str
    document_id: str
    category: str | None
    terms: str  # analysed terms joined by spaces (terms never contain spaces)
    has_vector: bool


@dataclass(frozen=True)
class NewRow:
    workspace_id: str
    chunk_id: str
    document_id: str
    revision: int
    category: str | None
    terms: str
    vector: np.ndarray | None  # float32, unit length


class IndexStore:
    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(_SCHEMA)

    def close(self) -> None:
        self.conn.close()

    def get_meta(self, name: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def set_meta(self, name: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (name, value))

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        self.conn.execute("ROLLBACK")

    # --- writes (inside begin/commit) ---

    def insert(self, row: NewRow) -> int:
        vector = None if row.vector is None else row.vector.astype("<f4").tobytes()
        cur = self.conn.execute(
            "INSERT INTO entries (workspace_id, chunk_id, document_id, revision, category, "
            "terms, vector) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row.workspace_id,
                row.chunk_id,
                row.document_id,
                row.revision,
                row.category,
                row.terms,
                vector,
            ),
        )
        return int(cur.lastrowid)

    def delete(
        self,
        workspace_id: str,
        *,
        chunk_ids: Sequence[str] | None = None,
        document_id: str | None = None,
    ) -> list[Row]:
        """Delete a workspace's entries by chunk ids or by document; returns them."""
        if chunk_ids is not None:
            rows = []
            for start in range(0, len(chunk_ids), 500):  # stay under SQLite's variable cap
                part = list(chunk_ids[start : start + 500])
                marks = ",".join("?" * len(part))
                rows += self._select(
                    f"workspace_id = ? AND chunk_id IN ({marks})", (workspace_id, *part)
                )
        else:
            rows = self._select("workspace_id = ? AND document_id = ?", (workspace_id, document_id))
        self.conn.executemany("DELETE FROM entries WHERE key = ?", [(r.key,) for r in rows])
        return rows

    def delete_workspace(self, workspace_id: str | None) -> None:
        if workspace_id is None:
            self.conn.execute("DELETE FROM entries")
        else:
            self.conn.execute("DELETE FROM entries WHERE workspace_id = ?", (workspace_id,))

    def bump_vector_seq(self, workspace_id: str) -> None:
        self.conn.execute(
            "INSERT INTO workspaces (workspace_id, vector_seq) VALUES (?, 1) ON CONFLICT "
            "(workspace_id) DO UPDATE SET vector_seq = vector_seq + 1",
            (workspace_id,),
        )

    # --- reads ---

    def vector_seq(self, workspace_id: str) -> int:
        row = self.conn.execute(
            "SELECT vector_seq FROM workspaces WHERE workspace_id = ?", (workspace_id,)
        ).fetchone()
        return row[0] if row else 0

    def workspaces(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT workspace_id FROM workspaces")]

    def count(self, workspace_id: str | None) -> int:
        if workspace_id is None:
            return self.conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        return self.conn.execute(
            "SELECT count(*) FROM entries WHERE workspace_id = ?", (workspace_id,)
        ).fetchone()[0]

    def rows(self, workspace_id: str) -> Iterator[Row]:
        """A workspace's entries in key order (the order they were indexed)."""
        cur = self.conn.execute(
            "SELECT key, chunk_id, document_id, category, terms, vector IS NOT NULL "
            "FROM entries WHERE workspace_id = ? ORDER BY key",
            (workspace_id,),
        )
        for r in cur:
            yield Row(r[0], r[1], r[2], r[3], r[4], bool(r[5]))

    def vectors(
        self, workspace_id: str, dimension: int, batch: int = 8192
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(keys, float32 matrix) batches of a workspace's vectors."""
        cur = self.conn.execute(
            "SELECT key, vector FROM entries WHERE workspace_id = ? AND vector IS NOT NULL "
            "ORDER BY key",
            (workspace_id,),
        )
        while rows := cur.fetchmany(batch):
            keys = np.fromiter((r[0] for r in rows), dtype=np.uint64, count=len(rows))
            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4")
            yield keys, matrix.reshape(len(rows), dimension)

    def _select(self, where: str, params: tuple) -> list[Row]:
        cur = self.conn.execute(
            "SELECT key, chunk_id, document_id, category, terms, vector IS NOT NULL "
            f"FROM entries WHERE {where}",
            params,
        )
        return [Row(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in cur]
