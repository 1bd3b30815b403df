"""AuditStore: the same behaviour on SQLite and on DynamoDB (moto): events read back newest
first, filtered by library, person (and the keys they made), action and time, paged with a
total; an event past its retention is never read; nothing rewrites an event."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import timedelta

import pytest

from bunko.domain import utcnow
from bunko.domain.audit import AuditEvent, AuditQuery
from tests.contract.accounts import AccountStores

NOW = utcnow()


def _event(minutes_ago: int, **fields) -> AuditEvent:
    base = {"action": "POST /knowledge-base/upload", "outcome": "ok", "status": 200}
    return AuditEvent(at=NOW - timedelta(minutes=minutes_ago), **{**base, **fields})


def test_events_read_back_newest_first_by_library(accounts: AccountStores):
    audit = accounts.audit
    first = _event(3, user_id="u-ada", library_id="ws-a", object_kind="file", object_id="d1",
                   client="192.0.2.7", door="rest")  # fmt: skip
    second = _event(2, user_id="u-bob", library_id="ws-a", status=403, outcome="refused")
    other = _event(1, user_id="u-ada", library_id="ws-b")
    for event in (first, second, other):
        audit.append(event)
    page = audit.events(AuditQuery(library_id="ws-a"))
    assert [e.id for e in page.events] == [second.id, first.id] and page.total == 2
    assert page.events[1] == first  # every field back as written
    everything = audit.events(AuditQuery())
    assert [e.id for e in everything.events] == [other.id, second.id, first.id]


def test_filters_by_person_action_and_time_and_pages(accounts: AccountStores):
    audit = accounts.audit
    by_ada = _event(30, user_id="u-ada", library_id="ws-a")
    by_key = _event(20, api_key_id="k-1", key_maker="u-ada", library_id="ws-a", door="mcp",
                    action="mcp:delete_document")  # fmt: skip
    by_bob = _event(10, user_id="u-bob", library_id="ws-a")
    for event in (by_ada, by_key, by_bob):
        audit.append(event)
    ada = audit.events(AuditQuery(library_id="ws-a", user_id="u-ada"))
    assert [e.id for e in ada.events] == [by_key.id, by_ada.id]  # her key's actions are hers
    deletes = audit.events(AuditQuery(library_id="ws-a", action="mcp:delete_document"))
    assert [e.id for e in deletes.events] == [by_key.id]
    window = AuditQuery(since=NOW - timedelta(minutes=25), until=NOW - timedelta(minutes=5))
    assert [e.id for e in audit.events(window).events] == [by_bob.id, by_key.id]
    assert [e.id for e in audit.events(replace(window, since=None)).events] == [
        by_bob.id, by_key.id, by_ada.id,
    ]  # fmt: skip
    page = audit.events(AuditQuery(library_id="ws-a", limit=2, offset=1))
    assert [e.id for e in page.events] == [by_key.id, by_ada.id] and page.total == 3
    assert audit.events(AuditQuery(library_id="ws-a", offset=3)).events == []


def test_an_event_past_its_retention_is_never_read(accounts: AccountStores):
    audit = accounts.audit
    old = _event(60 * 24 * 400, library_id="ws-a")  # 400 days ago, kept 365
    new = _event(1, library_id="ws-a")
    audit.append(old)
    audit.append(new)
    page = audit.events(AuditQuery(library_id="ws-a"))
    assert [e.id for e in page.events] == [new.id] and page.total == 1
    removed = audit.expire(NOW)
    assert removed in (0, 1)  # 0: the store's TTL removes it (DynamoDB)
    assert [e.id for e in audit.events(AuditQuery()).events] == [new.id]


def test_an_event_is_never_replaced(accounts: AccountStores):
    audit = accounts.audit
    event = _event(1, library_id="ws-a", user_id="u-ada")
    audit.append(event)
    with pytest.raises(Exception):  # noqa: B017 (sqlite3.IntegrityError or a failed condition)
        audit.append(replace(event, user_id="u-mallory"))
    assert audit.events(AuditQuery()).events == [event]


def test_the_sqlite_trail_refuses_rewrites(tmp_path):
    from bunko.adapters.local.sqlite.audit import SqliteAuditStore
    from bunko.adapters.local.sqlite.db import SqliteDatabase

    db = SqliteDatabase(tmp_path / "bunko.db")
    audit = SqliteAuditStore(db)
    audit.append(_event(1, library_id="ws-a"))
    conn = db.connect()
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit_events SET user_id = 'u-mallory'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit_events")
    assert audit.events(AuditQuery()).total == 1
    db.close()
