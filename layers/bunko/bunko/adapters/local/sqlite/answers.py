"""SqliteAnswerStore: answers and their marks in the metadata database (migration 0016)."""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import UTC, datetime

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain.answers import AnswerMark, AnswerRecord

_FIELDS = tuple(
    [
        "id",
        "library_id",
        "asker",
        "question",
        "answer",
        "sources",
        "refused",
        "door",
        "conversation_id",
        "turn",
        "at",
        "expires",
        "collected",
        "mark",
        "comment",
        "marked_by",
        "marked_at",
    ]
)
_COLUMNS = ", ".join(_FIELDS)
_LIVE = "(expires IS NULL OR expires > ?)"


def _iso(when: datetime | None) -> str | None:
    return when.astimezone(UTC).isoformat() if when else None


def _epoch(when: datetime | None) -> int | None:
    return math.floor(when.timestamp()) if when else None


def _now() -> int:
    return math.floor(datetime.now(UTC).timestamp())


def _record(row: sqlite3.Row) -> AnswerRecord:
    return AnswerRecord(
        id=row["id"],
        library_id=row["library_id"],
        asker=row["asker"],
        question=row["question"],
        answer=row["answer"],
        sources=json.loads(row["sources"]),
        refused=bool(row["refused"]),
        door=row["door"],
        conversation_id=row["conversation_id"],
        turn=row["turn"],
        at=datetime.fromisoformat(row["at"]),
        expires_at=datetime.fromtimestamp(row["expires"], UTC) if row["expires"] else None,
        collected=bool(row["collected"]),
        mark=row["mark"],
        comment=row["comment"],
        marked_by=row["marked_by"],
        marked_at=datetime.fromisoformat(row["marked_at"]) if row["marked_at"] else None,
    )


class SqliteAnswerStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def add(self, record: AnswerRecord) -> None:
        values = (
            record.id,
            record.library_id,
            record.asker,
            record.question,
            record.answer,
            json.dumps(record.sources, ensure_ascii=False),
            int(record.refused),
            record.door,
            record.conversation_id,
            record.turn,
            _iso(record.at),
            _epoch(record.expires_at),
            int(record.collected),
            record.mark,
            record.comment,
            record.marked_by,
            _iso(record.marked_at),
        )
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT INTO answers ({_COLUMNS}) VALUES ({', '.join('?' * len(_FIELDS))})",
                values,
            )

    def get(self, library_id: str, answer_id: str) -> AnswerRecord | None:
        row = (
            self.db.connect()
            .execute(
                f"SELECT {_COLUMNS} FROM answers WHERE id = ? AND library_id = ? AND {_LIVE}",
                (answer_id, library_id, _now()),
            )
            .fetchone()
        )
        return _record(row) if row else None

    def set_mark(
        self,
        library_id: str,
        answer_id: str,
        marked: AnswerMark,
        *,
        collected: bool,
        expires_at: datetime | None,
    ) -> AnswerRecord | None:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE answers SET mark = ?, comment = ?, marked_by = ?, marked_at = ?, "
                "collected = MAX(collected, ?), expires = ? "
                f"WHERE id = ? AND library_id = ? AND {_LIVE}",
                (
                    marked.mark,
                    marked.comment,
                    marked.marked_by,
                    _iso(marked.marked_at),
                    int(collected),
                    _epoch(expires_at),
                    answer_id,
                    library_id,
                    _now(),
                ),
            )
        return self.get(library_id, answer_id) if cursor.rowcount else None

    def marked(
        self, library_id: str, *, limit: int, offset: int = 0
    ) -> tuple[list[AnswerRecord], int]:
        where = f"library_id = ? AND mark IS NOT NULL AND {_LIVE}"
        params = (library_id, _now())
        conn = self.db.connect()
        total = conn.execute(f"SELECT COUNT(*) FROM answers WHERE {where}", params).fetchone()[0]
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM answers WHERE {where} "
            "ORDER BY marked_at DESC, id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [_record(r) for r in rows], total

    def collected(self, library_id: str, *, limit: int) -> list[AnswerRecord]:
        rows = self.db.connect().execute(
            f"SELECT {_COLUMNS} FROM answers WHERE library_id = ? AND collected = 1 "
            f"AND {_LIVE} ORDER BY at DESC, id DESC LIMIT ?",
            (library_id, _now(), limit),
        )
        return [_record(r) for r in rows]

    def delete_library(self, library_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM answers WHERE library_id = ?", (library_id,)).rowcount

    def expire(self, now: datetime) -> int:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM answers WHERE expires IS NOT NULL AND expires <= ?", (_epoch(now),)
            )
        return cursor.rowcount
