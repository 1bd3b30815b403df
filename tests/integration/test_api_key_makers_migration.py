"""Migration 0013: keys an older Bunko stored had no maker. Opened now, a key in a user's own
library is that user's; any other (a shared library's) has none, and is refused at use."""

from __future__ import annotations

from bunko.adapters.local.sqlite.apikeys import SqliteApiKeyStore
from bunko.adapters.local.sqlite.db import SqliteDatabase
from tests.sqlite_migrations import database_before

MIGRATION = "0013_api_key_makers.sql"


def test_older_keys_get_their_maker_where_it_is_known(tmp_path):
    conn = database_before(tmp_path / "bunko.db", MIGRATION)
    conn.execute(
        "INSERT INTO users (id, username, username_key, password_hash, workspace_id, is_admin,"
        " token_version, created_at, updated_at) VALUES ('u-1', 'ada', 'ada', 'h', 'ws-ada', 0,"
        " 0, '2024-01-01T00:00:00+00:00', '2024-01-01T00:00:00+00:00')"
    )
    for key_id, workspace in (("own", "ws-ada"), ("shared", "lib-1")):
        conn.execute(
            "INSERT INTO api_keys (id, workspace_id, name, scopes, key_hash, prefix, created_at)"
            " VALUES (?, ?, '', 'kb:read', ?, 'bk_', '2024-01-01T00:00:00+00:00')",
            (key_id, workspace, f"hash-{key_id}"),
        )
    conn.commit()
    conn.close()
    db = SqliteDatabase(tmp_path / "bunko.db")
    try:
        keys = SqliteApiKeyStore(db)
        assert keys.get("own").created_by == "u-1"
        assert keys.get("shared").created_by is None
    finally:
        db.close()
