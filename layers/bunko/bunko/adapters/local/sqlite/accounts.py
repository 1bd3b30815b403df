"""SqliteUserStore and SqliteLoginAttemptStore: users and login throttling in SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain.accounts import LoginAttempts, User, username_key
from bunko.errors import ConflictError, NotFoundError

_USER_COLUMNS = (
    "id, username, username_key, password_hash, workspace_id, is_admin, token_version, "
    "created_at, updated_at"
)


def _user(row: sqlite3.Row) -> User:
    return User(
        id=row["id"],
        username=row["username"],
        password_hash=row["password_hash"],
        workspace_id=row["workspace_id"],
        is_admin=bool(row["is_admin"]),
        token_version=row["token_version"],
        created_at=datetime.fromisoformat(row["created_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
    )


def _user_values(user: User) -> tuple:
    return (
        user.id,
        user.username,
        username_key(user.username),
        user.password_hash,
        user.workspace_id,
        int(user.is_admin),
        user.token_version,
        user.created_at.isoformat(),
        user.updated_at.isoformat(),
    )


def _admins(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM users WHERE is_admin = 1").fetchone()[0])


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


class SqliteUserStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def add_user(self, user: User) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO users ({_USER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    _user_values(user),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"username {user.username!r} is taken") from exc

    def add_first_admin(self, user: User) -> bool:
        admin = replace(user, is_admin=True)
        try:
            with self.db.transaction() as conn:  # the write lock first: nobody comes between
                if _admins(conn) > 0:
                    return False
                conn.execute(
                    f"INSERT INTO users ({_USER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    _user_values(admin),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"username {user.username!r} is taken") from exc
        return True

    def save_user(self, user: User) -> None:
        """Update; NotFoundError if absent, ConflictError when the new name is taken or the
        change would demote the last admin (checked in the same write transaction)."""
        values = _user_values(user)
        try:
            with self.db.transaction() as conn:
                row = conn.execute("SELECT is_admin FROM users WHERE id = ?", (user.id,)).fetchone()
                if row is None:
                    raise NotFoundError(f"user {user.id} not found")
                if row["is_admin"] and not user.is_admin and _admins(conn) <= 1:
                    raise ConflictError("the last admin cannot be demoted")
                conn.execute(
                    "UPDATE users SET username = ?, username_key = ?, password_hash = ?, "
                    "workspace_id = ?, is_admin = ?, token_version = ?, created_at = ?, "
                    "updated_at = ? WHERE id = ?",
                    (*values[1:], user.id),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"username {user.username!r} is taken") from exc

    def get_user(self, user_id: str) -> User | None:
        row = self.db.connect().execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone()
        return _user(row) if row else None

    def get_user_by_username(self, username: str) -> User | None:
        row = (
            self.db.connect()
            .execute("SELECT * FROM users WHERE username_key = ?", (username_key(username),))
            .fetchone()
        )
        return _user(row) if row else None

    def list_users(self) -> list[User]:
        rows = self.db.connect().execute("SELECT * FROM users ORDER BY created_at, id")
        return [_user(r) for r in rows]

    def count_admins(self) -> int:
        return _admins(self.db.connect())

    def delete_user(self, user_id: str) -> bool:
        # Check and delete in one write transaction: no second delete can slip in between.
        with self.db.transaction() as conn:
            row = conn.execute("SELECT is_admin FROM users WHERE id = ?", (user_id,)).fetchone()
            if row is None:
                return False
            if row["is_admin"] and _admins(conn) <= 1:
                raise ConflictError("the last admin cannot be deleted")
            conn.execute("DELETE FROM users WHERE id = ?", (user_id,))
        return True


class SqliteLoginAttemptStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def get_attempts(self, key: str) -> LoginAttempts | None:
        return _read_attempts(self.db.connect(), key)

    def save_attempts(self, attempts: LoginAttempts) -> None:
        with self.db.transaction() as conn:
            _write_attempts(conn, attempts)

    def update_attempts(
        self,
        keys: Sequence[str],
        change: Callable[[list[LoginAttempts]], list[LoginAttempts]],
    ) -> None:
        # One BEGIN IMMEDIATE transaction: read, change and write with the write lock held,
        # so another process or thread counting the same keys waits for this one.
        with self.db.transaction() as conn:
            records = [_read_attempts(conn, k) or LoginAttempts(key=k) for k in keys]
            for attempts in change(records):
                _write_attempts(conn, attempts)

    def clear_attempts(self, key: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM login_attempts WHERE key = ?", (key,))


def _read_attempts(conn: sqlite3.Connection, key: str) -> LoginAttempts | None:
    row = conn.execute("SELECT * FROM login_attempts WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    return LoginAttempts(
        key=row["key"],
        failures=row["failures"],
        locked_until=_dt(row["locked_until"]),
        last_failure=_dt(row["last_failure"]),
    )


def _write_attempts(conn: sqlite3.Connection, attempts: LoginAttempts) -> None:
    conn.execute(
        "INSERT INTO login_attempts (key, failures, locked_until, last_failure) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, "
        "locked_until = excluded.locked_until, last_failure = excluded.last_failure",
        (
            attempts.key,
            attempts.failures,
            _iso(attempts.locked_until),
            _iso(attempts.last_failure),
        ),
    )
