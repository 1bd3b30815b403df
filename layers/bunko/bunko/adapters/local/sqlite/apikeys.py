"""SqliteApiKeyStore: hashed API keys in the metadata database (migrations 0003, 0013)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain.accounts import ApiKey
from bunko.errors import ConflictError

_COLUMNS = "id, workspace_id, name, scopes, key_hash, prefix, created_at, revoked_at, created_by"


def _key(row: sqlite3.Row) -> ApiKey:
    return ApiKey(
        id=row["id"],
        workspace_id=row["workspace_id"],
        name=row["name"],
        # Space-separated, the way OAuth writes a scope list.
        scopes=frozenset(row["scopes"].split()),
        key_hash=row["key_hash"],
        prefix=row["prefix"],
        created_at=datetime.fromisoformat(row["created_at"]),
        revoked_at=datetime.fromisoformat(row["revoked_at"]) if row["revoked_at"] else None,
        created_by=row["created_by"],
    )


class SqliteApiKeyStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def add(self, key: ApiKey) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO api_keys ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        key.id,
                        key.workspace_id,
                        key.name,
                        " ".join(sorted(key.scopes)),
                        key.key_hash,
                        key.prefix,
                        key.created_at.isoformat(),
                        key.revoked_at.isoformat() if key.revoked_at else None,
                        key.created_by,
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"API key {key.id} already exists") from exc

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        row = (
            self.db.connect()
            .execute(f"SELECT {_COLUMNS} FROM api_keys WHERE key_hash = ?", (key_hash,))
            .fetchone()
        )
        return _key(row) if row else None

    def get(self, key_id: str) -> ApiKey | None:
        row = (
            self.db.connect()
            .execute(f"SELECT {_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
            .fetchone()
        )
        return _key(row) if row else None

    def list_keys(self, workspace_id: str | None = None) -> list[ApiKey]:
        sql = f"SELECT {_COLUMNS} FROM api_keys"
        params: tuple = ()
        if workspace_id is not None:
            sql += " WHERE workspace_id = ?"
            params = (workspace_id,)
        return [
            _key(r) for r in self.db.connect().execute(sql + " ORDER BY created_at, id", params)
        ]

    def revoke(self, key_id: str, when: datetime) -> bool:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (when.isoformat(), key_id),
            )
        return cursor.rowcount > 0
