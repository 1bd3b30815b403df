"""SqliteConversationStore: chat conversations and their messages (migration 0005).

Times are stored as ISO UTC with microseconds, so they order as text. Expired rows are left
out of every read and removed by `prune`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain import utcnow
from bunko.domain.conversations import Conversation, ConversationFullError, Message
from bunko.errors import ConflictError

_HEAD = "id, workspace_id, owner, title, message_count, created_at, updated_at, expires_at"
_MESSAGE = "seq, role, content, sources, truncated, created_at, expires_at"
_LIVE = "(expires_at IS NULL OR expires_at > ?)"


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat(timespec="microseconds")


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _head(row: sqlite3.Row) -> Conversation:
    return Conversation(
        id=row["id"],
        workspace_id=row["workspace_id"],
        owner=row["owner"],
        title=row["title"],
        message_count=row["message_count"],
        created_at=datetime.fromisoformat(row["created_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
        expires_at=_time(row["expires_at"]),
    )


def _message(row: sqlite3.Row) -> Message:
    return Message(
        role=row["role"],
        content=row["content"],
        sources=json.loads(row["sources"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        truncated=bool(row["truncated"]),
        expires_at=_time(row["expires_at"]),
    )


class SqliteConversationStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def add(self, conversation: Conversation) -> None:
        c = conversation
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO conversations ({_HEAD}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        c.id,
                        c.workspace_id,
                        c.owner,
                        c.title,
                        0,
                        _iso(c.created_at),
                        _iso(c.updated_at),
                        _iso(c.expires_at),
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"conversation {c.id} already exists") from exc

    def _head(
        self, conn: sqlite3.Connection, workspace_id: str, owner: str, conversation_id: str
    ) -> Conversation | None:
        row = conn.execute(
            f"SELECT {_HEAD} FROM conversations WHERE id = ? AND workspace_id = ? AND owner = ? "
            f"AND {_LIVE}",
            (conversation_id, workspace_id, owner, _iso(utcnow())),
        ).fetchone()
        return _head(row) if row else None

    def get(
        self, workspace_id: str, owner: str, conversation_id: str, *, messages: bool = True
    ) -> Conversation | None:
        conn = self.db.connect()
        found = self._head(conn, workspace_id, owner, conversation_id)
        if found is not None and messages:
            rows = conn.execute(
                f"SELECT {_MESSAGE} FROM conversation_messages WHERE conversation_id = ? "
                f"AND {_LIVE} ORDER BY seq",
                (conversation_id, _iso(utcnow())),
            )
            found.messages = [_message(r) for r in rows]
        return found

    def list_conversations(
        self, workspace_id: str, owner: str, *, limit: int, offset: int = 0
    ) -> list[Conversation]:
        rows = self.db.connect().execute(
            f"SELECT {_HEAD} FROM conversations WHERE workspace_id = ? AND owner = ? AND {_LIVE} "
            "ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
            (workspace_id, owner, _iso(utcnow()), limit, offset),
        )
        return [_head(r) for r in rows]

    def count(self, workspace_id: str, owner: str) -> int:
        row = (
            self.db.connect()
            .execute(
                f"SELECT COUNT(*) FROM conversations WHERE workspace_id = ? AND owner = ? AND {_LIVE}",
                (workspace_id, owner, _iso(utcnow())),
            )
            .fetchone()
        )
        return int(row[0])

    def rename(
        self, workspace_id: str, owner: str, conversation_id: str, title: str
    ) -> Conversation | None:
        with self.db.transaction() as conn:
            if self._head(conn, workspace_id, owner, conversation_id) is None:
                return None
            conn.execute(
                "UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id)
            )
            return self._head(conn, workspace_id, owner, conversation_id)

    def append(
        self,
        workspace_id: str,
        owner: str,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        max_messages: int,
        title: str | None = None,
        expires_at: datetime | None = None,
    ) -> Conversation | None:
        with self.db.transaction() as conn:
            head = self._head(conn, workspace_id, owner, conversation_id)
            if head is None:
                return None
            if head.message_count + len(messages) > max_messages:
                raise ConversationFullError(max_messages)
            rows = [
                (
                    conversation_id,
                    head.message_count + i + 1,
                    m.role,
                    m.content,
                    json.dumps(m.sources, ensure_ascii=False),
                    int(m.truncated),
                    _iso(m.created_at),
                    _iso(m.expires_at),
                )
                for i, m in enumerate(messages)
            ]
            conn.executemany(
                "INSERT INTO conversation_messages (conversation_id, "
                f"{_MESSAGE}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            last = messages[-1].created_at if messages else head.updated_at
            conn.execute(
                "UPDATE conversations SET message_count = message_count + ?, updated_at = ?, "
                "expires_at = ?, title = COALESCE(title, ?) WHERE id = ?",
                (len(messages), _iso(last), _iso(expires_at), title, conversation_id),
            )
            return self._head(conn, workspace_id, owner, conversation_id)

    def delete(self, workspace_id: str, owner: str, conversation_id: str) -> bool:
        with self.db.transaction() as conn:
            live = self._head(conn, workspace_id, owner, conversation_id) is not None
            conn.execute(
                "DELETE FROM conversations WHERE id = ? AND workspace_id = ? AND owner = ?",
                (conversation_id, workspace_id, owner),
            )
        return live

    def delete_owner(self, workspace_id: str, owner: str) -> int:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM conversations WHERE workspace_id = ? AND owner = ?",
                (workspace_id, owner),
            )
        return cursor.rowcount

    def delete_workspace(self, workspace_id: str) -> int:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM conversations WHERE workspace_id = ?", (workspace_id,)
            )
        return cursor.rowcount

    def prune(self, now: datetime) -> int:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM conversations WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (_iso(now),),
            )
            conn.execute(
                "DELETE FROM conversation_messages WHERE expires_at IS NOT NULL "
                "AND expires_at <= ?",
                (_iso(now),),
            )
        return cursor.rowcount
