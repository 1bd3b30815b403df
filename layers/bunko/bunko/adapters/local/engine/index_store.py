"""The local search index's durable half: one SQLite file (WAL) holding every entry.

Each row keeps what the in-memory engines need to be rebuilt: the chunk's analysed terms
(not its text: the metadata store has that) and its vector as float16 bytes (older files
hold float32; both are read). `key` is the engine-side id, growing in write order; the chunk
id is an ordinary column, unique per workspace, as in a cloud index where the engine
assigns its own ids (DESIGN decision 2).

`vector_seq` (named before it counted every change) counts a workspace's committed writes;
a saved snapshot records the value it matches. Deletes leave a tombstone (key, seq) until a
snapshot covers them, so reopening replays exactly what the snapshot missed: the entries
with larger keys, and the tombstones with larger seqs.
The caller serialises access (one connection, used under the index's lock).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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
CREATE TABLE IF NOT EXISTS deleted (
  workspace_id TEXT NOT NULL,
  key INTEGER NOT NULL,
  seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS deleted_seq ON deleted (workspace_id, seq);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True)
class Row:
    key: int
    chunk_id: str
    document_id: str
    category: str | None
    terms: str  # analysed terms joined by spaces (terms never contain spaces)
    vector: bytes | None  # float16 or (older files) float32


@dataclass(frozen=True)
class NewRow:
    workspace_id: str
    chunk_id: str
    document_id: str
    revision: int
    category: str | None
    terms: str
    vector: np.ndarray | None  # unit length


class IndexStore:
    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(_SCHEMA)
        self._data_version = self.conn.execute("PRAGMA data_version").fetchone()[0]

    def close(self) -> None:
        self.conn.close()

    def changed_elsewhere(self) -> bool:
        """True once after another process (another connection) committed to the database
        since the last call: SQLite's data_version moves only for others' commits."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        changed, self._data_version = version != self._data_version, version
        return changed

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

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on any error."""
        self.begin()
        try:
            yield
        except BaseException:
            self.rollback()
            raise
        self.commit()

    # --- writes (inside begin/commit) ---

    def insert(self, rows: Sequence[NewRow]) -> list[int]:
        """Insert rows; returns their keys, in order."""
        self.conn.executemany(
            "INSERT INTO entries (workspace_id, chunk_id, document_id, revision, category, "
            "terms, vector) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    row.workspace_id,
                    row.chunk_id,
                    row.document_id,
                    row.revision,
                    row.category,
                    row.terms,
                    None if row.vector is None else row.vector.astype("<f2").tobytes(),
                )
                for row in rows
            ],
        )
        # One writer inside BEGIN IMMEDIATE: AUTOINCREMENT hands out consecutive keys.
        last = self.conn.execute("SELECT last_insert_rowid()").fetchone()[0]
        return list(range(last - len(rows) + 1, last + 1))

    def delete(
        self,
        workspace_id: str,
        *,
        seq: int,
        chunk_ids: Sequence[str] | None = None,
        document_id: str | None = None,
    ) -> list[int]:
        """Delete a workspace's entries by chunk ids or by document, leaving tombstones at
        `seq`; returns their keys."""
        if chunk_ids is not None:
            keys: list[int] = []
            for start in range(0, len(chunk_ids), 500):  # stay under SQLite's variable cap
                part = list(chunk_ids[start : start + 500])
                marks = ",".join("?" * len(part))
                keys += self._keys(
                    f"workspace_id = ? AND chunk_id IN ({marks})", (workspace_id, *part)
                )
        else:
            keys = self._keys("workspace_id = ? AND document_id = ?", (workspace_id, document_id))
        self.conn.executemany("DELETE FROM entries WHERE key = ?", [(k,) for k in keys])
        self.conn.executemany(
            "INSERT INTO deleted (workspace_id, key, seq) VALUES (?, ?, ?)",
            [(workspace_id, k, seq) for k in keys],
        )
        return keys

    def delete_workspace(self, workspace_id: str | None) -> None:
        for table in ("entries", "deleted"):
            if workspace_id is None:
                self.conn.execute(f"DELETE FROM {table}")
            else:
                self.conn.execute(f"DELETE FROM {table} WHERE workspace_id = ?", (workspace_id,))

    def bump_seq(self, workspace_id: str) -> int:
        """Count one more committed change of the workspace; returns the new value."""
        return self.conn.execute(
            "INSERT INTO workspaces (workspace_id, vector_seq) VALUES (?, 1) ON CONFLICT "
            "(workspace_id) DO UPDATE SET vector_seq = vector_seq + 1 RETURNING vector_seq",
            (workspace_id,),
        ).fetchone()[0]

    def prune_deleted(self, workspace_id: str, seq: int) -> None:
        """Forget tombstones a snapshot at `seq` already covers."""
        self.conn.execute(
            "DELETE FROM deleted WHERE workspace_id = ? AND seq <= ?", (workspace_id, seq)
        )

    # --- reads ---

    def seq(self, workspace_id: str) -> int:
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

    def chunk_ids(self, workspace_id: str) -> set[str]:
        cur = self.conn.execute(
            "SELECT chunk_id FROM entries WHERE workspace_id = ?", (workspace_id,)
        )
        return {r[0] for r in cur}

    def rows(self, workspace_id: str, *, after: int = 0) -> Iterator[Row]:
        """A workspace's entries with keys above `after`, in key order (write order)."""
        cur = self.conn.execute(
            "SELECT key, chunk_id, document_id, category, terms, vector "
            "FROM entries WHERE workspace_id = ? AND key > ? ORDER BY key",
            (workspace_id, after),
        )
        for r in cur:
            yield Row(*r)

    def deleted_since(self, workspace_id: str, seq: int) -> list[int]:
        """Keys deleted by changes after `seq`."""
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT key FROM deleted WHERE workspace_id = ? AND seq > ?", (workspace_id, seq)
            )
        ]

    def _keys(self, where: str, params: tuple) -> list[int]:
        return [r[0] for r in self.conn.execute(f"SELECT key FROM entries WHERE {where}", params)]


def decode_vector(blob: bytes, dimension: int) -> np.ndarray:
    """A stored vector as float16 (float32 blobs, from older files, are converted)."""
    dtype = "<f2" if len(blob) == 2 * dimension else "<f4"
    vector = np.frombuffer(blob, dtype=dtype)
    if len(vector) != dimension:
        raise ValueError(f"a stored vector has {len(vector)} values, not {dimension}")
    return vector.astype(np.float16)
