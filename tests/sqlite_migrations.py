"""A database as an older Bunko left it: every migration before one, and nothing after, so a
test can write rows in the old shape and see the pending migrations upgrade them."""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path

from bunko.adapters.local.sqlite import db as sqlite_db


def database_before(path: Path, migration: str) -> sqlite3.Connection:
    """A new database file at `path` with the migrations named below `migration` applied and
    recorded; the open connection, for the test to add its rows (and commit and close)."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT DEFAULT"
        " CURRENT_TIMESTAMP)"
    )
    files = resources.files(sqlite_db._MIGRATIONS_PACKAGE).iterdir()
    for f in sorted((f for f in files if f.name.endswith(".sql")), key=lambda f: f.name):
        if f.name < migration:
            conn.executescript(f.read_text(encoding="utf-8"))
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (f.name,))
    return conn
