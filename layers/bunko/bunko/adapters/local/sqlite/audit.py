"""SqliteAuditStore: the audit trail in the metadata database (migration 0015), append-only:
its triggers refuse an update, and a delete before an event's retention ends."""

from __future__ import annotations

import math
import sqlite3
from datetime import UTC, datetime, timedelta

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain.audit import AuditEvent, AuditPage, AuditQuery

_FIELDS = (
    "id", "at", "action", "outcome", "status", "user_id", "api_key_id", "key_maker",
    "library_id", "object_kind", "object_id", "client", "door",
)  # fmt: skip
_COLUMNS = ", ".join(_FIELDS)


def _event(row: sqlite3.Row) -> AuditEvent:
    values = {name: row[name] for name in _FIELDS}
    values["at"] = datetime.fromisoformat(row["at"])
    return AuditEvent(**values)


def _iso(when: datetime | None) -> str | None:
    # one zone for every stored time, so text order is time order
    return when.astimezone(UTC).isoformat() if when else None


def _epoch(when: datetime) -> int:
    return math.floor(when.timestamp())


class SqliteAuditStore:
    def __init__(self, db: SqliteDatabase, *, retention_days: int = 365) -> None:
        self.db = db
        self.retention = timedelta(days=retention_days) if retention_days else None

    def append(self, event: AuditEvent) -> None:
        values = [getattr(event, name) for name in _FIELDS]
        values[1] = _iso(event.at)
        expires = _epoch(event.at + self.retention) if self.retention else None
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT INTO audit_events ({_COLUMNS}, expires) "
                f"VALUES ({', '.join('?' * len(_FIELDS))}, ?)",
                (*values, expires),
            )

    def events(self, query: AuditQuery) -> AuditPage:
        where = ["(expires IS NULL OR expires > ?)"]
        params: list = [_epoch(datetime.now(UTC))]
        for column, value in (
            ("library_id = ?", query.library_id),
            ("action = ?", query.action),
            ("at >= ?", _iso(query.since)),
            ("at < ?", _iso(query.until)),
        ):
            if value is not None:
                where.append(column)
                params.append(value)
        if query.user_id is not None:  # the person, or a key they made
            where.append("(user_id = ? OR key_maker = ?)")
            params += [query.user_id, query.user_id]
        clause = " AND ".join(where)
        conn = self.db.connect()
        total = conn.execute(f"SELECT COUNT(*) FROM audit_events WHERE {clause}", params)
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM audit_events WHERE {clause} "
            "ORDER BY at DESC, id DESC LIMIT ? OFFSET ?",
            (*params, query.limit, query.offset),
        )
        return AuditPage(events=[_event(r) for r in rows], total=total.fetchone()[0])

    def expire(self, now: datetime) -> int:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM audit_events WHERE expires IS NOT NULL AND expires <= ?",
                (_epoch(now),),
            )
        return cursor.rowcount
