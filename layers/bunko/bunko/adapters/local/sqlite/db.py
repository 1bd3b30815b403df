"""One SQLite database file: per-thread connections, WAL, and numbered migrations.

Every store that keeps its tables in the metadata database shares one `SqliteDatabase`.
Migrations are `migrations/NNNN_name.sql`, applied once each in order and recorded in
`schema_migrations`, so a database created by an older Bunko upgrades itself on open.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

_MIGRATIONS_PACKAGE = "bunko.adapters.local.sqlite.migrations"


class SqliteDatabase:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        # Writers are serialised in-process; WAL lets readers run beside them.
        self.write_lock = threading.RLock()
        self.migrate()

    def connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE), committed on success, rolled back on error."""
        conn = self.connect()
        with self.write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def migrate(self) -> list[str]:
        """Apply pending migrations; returns the names applied."""
        applied: list[str] = []
        with self.transaction() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied_at TEXT DEFAULT CURRENT_TIMESTAMP)"
            )
            done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
            files = sorted(
                (
                    f
                    for f in resources.files(_MIGRATIONS_PACKAGE).iterdir()
                    if f.name.endswith(".sql")
                ),
                key=lambda f: f.name,
            )
            for f in files:
                if f.name in done:
                    continue
                for statement in _split_sql(f.read_text(encoding="utf-8")):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (f.name,))
                applied.append(f.name)
        return applied

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements (executescript would commit our transaction)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
