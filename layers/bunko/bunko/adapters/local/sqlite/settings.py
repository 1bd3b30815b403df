"""SqliteSettingsStore: JSON settings documents keyed by (scope, owner)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bunko.adapters.local.sqlite.db import SqliteDatabase


class SqliteSettingsStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def get_settings(self, scope: str, owner: str) -> dict[str, Any] | None:
        row = (
            self.db.connect()
            .execute("SELECT value FROM settings WHERE scope = ? AND owner = ?", (scope, owner))
            .fetchone()
        )
        return json.loads(row[0]) if row else None

    def get_many_settings(self, scope: str, owners: Sequence[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(owners))
        conn = self.db.connect()
        for start in range(0, len(unique), 500):  # under SQLite's bound-parameter limit
            batch = unique[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = conn.execute(
                f"SELECT owner, value FROM settings WHERE scope = ? AND owner IN ({marks})",
                (scope, *batch),
            )
            found.update((r[0], json.loads(r[1])) for r in rows)
        return found

    def put_settings(self, scope: str, owner: str, values: dict[str, Any]) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO settings (scope, owner, value) VALUES (?, ?, ?) "
                "ON CONFLICT (scope, owner) DO UPDATE SET value = excluded.value",
                (scope, owner, json.dumps(values, ensure_ascii=False)),
            )

    def delete_settings(self, scope: str, owner: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM settings WHERE scope = ? AND owner = ?", (scope, owner))

    def list_settings(self, scope: str) -> list[tuple[str, dict[str, Any]]]:
        rows = self.db.connect().execute(
            "SELECT owner, value FROM settings WHERE scope = ? ORDER BY owner", (scope,)
        )
        return [(r[0], json.loads(r[1])) for r in rows]

    def take_lease(self, scope: str, owner: str, holder: str, *, now: float, until: float) -> bool:
        # BEGIN IMMEDIATE holds the database's write lock across the read and the write, for
        # every process on the file: two cannot both see the lease free.
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT value FROM settings WHERE scope = ? AND owner = ?", (scope, owner)
            ).fetchone()
            if row is not None:
                held = json.loads(row[0])
                if held.get("holder") != holder and held.get("until", 0) > now:
                    return False
            conn.execute(
                "INSERT INTO settings (scope, owner, value) VALUES (?, ?, ?) "
                "ON CONFLICT (scope, owner) DO UPDATE SET value = excluded.value",
                (scope, owner, json.dumps({"holder": holder, "until": until})),
            )
        return True

    def release_lease(self, scope: str, owner: str, holder: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "DELETE FROM settings WHERE scope = ? AND owner = ? "
                "AND json_extract(value, '$.holder') = ?",
                (scope, owner, holder),
            )
