"""IdentityLinkStore in the embedded database (migration 0011)."""

from __future__ import annotations

import sqlite3

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain import utcnow
from bunko.errors import ConflictError


class SqliteIdentityLinkStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def linked_user(self, issuer: str, subject: str) -> str | None:
        row = (
            self.db.connect()
            .execute(
                "SELECT user_id FROM identity_links WHERE issuer = ? AND subject = ?",
                (issuer, subject),
            )
            .fetchone()
        )
        return row["user_id"] if row else None

    def link(self, issuer: str, subject: str, user_id: str) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO identity_links (issuer, subject, user_id, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (issuer, subject, user_id, utcnow().isoformat()),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError("this identity is linked to a user already") from exc

    def unlink(self, issuer: str, subject: str) -> bool:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM identity_links WHERE issuer = ? AND subject = ?", (issuer, subject)
            )
        return cursor.rowcount > 0

    def is_linked(self, issuer: str, user_id: str) -> bool:
        row = (
            self.db.connect()
            .execute(
                "SELECT 1 FROM identity_links WHERE issuer = ? AND user_id = ? LIMIT 1",
                (issuer, user_id),
            )
            .fetchone()
        )
        return row is not None

    def forget_user(self, user_id: str) -> int:
        with self.db.transaction() as conn:
            cursor = conn.execute("DELETE FROM identity_links WHERE user_id = ?", (user_id,))
        return cursor.rowcount
