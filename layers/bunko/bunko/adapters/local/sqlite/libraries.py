"""LibraryStore in the embedded database (migration 0008)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain.libraries import Library, Membership, Role, name_key
from bunko.errors import ConflictError

_COLUMNS = "id, name, created_by, created_at"


def _library(row: sqlite3.Row) -> Library:
    return Library(
        id=row["id"],
        name=row["name"],
        created_by=row["created_by"],
        created_at=datetime.fromisoformat(row["created_at"]),
    )


class SqliteLibraryStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def add_library(self, library: Library, owner: str | None) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO libraries (id, name, name_key, created_by, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        library.id,
                        library.name,
                        name_key(library.name),
                        library.created_by,
                        library.created_at.isoformat(),
                    ),
                )
                if owner is not None:
                    conn.execute(
                        "INSERT INTO library_members (library_id, user_id, role) "
                        "VALUES (?, ?, 'owner')",
                        (library.id, owner),
                    )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"a library named {library.name!r} exists") from exc

    def get_library(self, library_id: str) -> Library | None:
        row = (
            self.db.connect()
            .execute(f"SELECT {_COLUMNS} FROM libraries WHERE id = ?", (library_id,))
            .fetchone()
        )
        return _library(row) if row else None

    def list_libraries(self) -> list[Library]:
        rows = self.db.connect().execute(f"SELECT {_COLUMNS} FROM libraries ORDER BY name_key")
        return [_library(r) for r in rows]

    def get_library_by_name(self, name: str) -> Library | None:
        row = (
            self.db.connect()
            .execute(f"SELECT {_COLUMNS} FROM libraries WHERE name_key = ?", (name_key(name),))
            .fetchone()
        )
        return _library(row) if row else None

    def delete_library(self, library_id: str) -> bool:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM library_members WHERE library_id = ?", (library_id,))
            return conn.execute("DELETE FROM libraries WHERE id = ?", (library_id,)).rowcount > 0

    def set_member(
        self, library_id: str, user_id: str, role: Role, *, keep_an_owner: bool = False
    ) -> None:
        with self.db.transaction() as conn:  # BEGIN IMMEDIATE: the check and the write at once
            if keep_an_owner and role != "owner":
                _keep_an_owner(conn, library_id, user_id)
            conn.execute(
                "INSERT INTO library_members (library_id, user_id, role) VALUES (?, ?, ?) "
                "ON CONFLICT (library_id, user_id) DO UPDATE SET role = excluded.role",
                (library_id, user_id, role),
            )

    def remove_member(self, library_id: str, user_id: str, *, keep_an_owner: bool = False) -> bool:
        with self.db.transaction() as conn:
            if keep_an_owner:
                _keep_an_owner(conn, library_id, user_id)
            return (
                conn.execute(
                    "DELETE FROM library_members WHERE library_id = ? AND user_id = ?",
                    (library_id, user_id),
                ).rowcount
                > 0
            )

    def members(self, library_id: str) -> list[Membership]:
        rows = self.db.connect().execute(
            "SELECT library_id, user_id, role FROM library_members WHERE library_id = ? "
            "ORDER BY rowid",
            (library_id,),
        )
        return [Membership(r["library_id"], r["user_id"], r["role"]) for r in rows]

    def role_of(self, library_id: str, user_id: str) -> Role | None:
        row = (
            self.db.connect()
            .execute(
                "SELECT role FROM library_members WHERE library_id = ? AND user_id = ?",
                (library_id, user_id),
            )
            .fetchone()
        )
        return row["role"] if row else None

    def memberships(self, user_id: str) -> list[tuple[Library, Role]]:
        rows = self.db.connect().execute(
            "SELECT l.id, l.name, l.created_by, l.created_at, m.role FROM library_members m "
            "JOIN libraries l ON l.id = m.library_id WHERE m.user_id = ? ORDER BY l.name_key",
            (user_id,),
        )
        return [(_library(r), r["role"]) for r in rows]

    def forget_user(self, user_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute(
                "DELETE FROM library_members WHERE user_id = ?", (user_id,)
            ).rowcount


def _keep_an_owner(conn: sqlite3.Connection, library_id: str, user_id: str) -> None:
    """ConflictError if `user_id` is the library's only owner (inside the write's transaction)."""
    owners = [
        row[0]
        for row in conn.execute(
            "SELECT user_id FROM library_members WHERE library_id = ? AND role = 'owner'",
            (library_id,),
        )
    ]
    if owners == [user_id]:
        raise ConflictError("the last owner stays an owner: make another member owner first")
