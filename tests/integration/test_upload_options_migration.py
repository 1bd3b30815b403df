"""Migration 0009: a database an older Bunko wrote, where each upload's options (mode,
embeddingModelId) sat in `settings` (scope "upload", owner: the document id), opens with the
options on the documents themselves and that scope gone; other settings stay."""

from __future__ import annotations

import json
from pathlib import Path

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.settings import SqliteSettingsStore
from bunko.adapters.local.sqlite.store import SqliteMetadataStore
from tests.sqlite_migrations import database_before

WS = "ws-1"
MIGRATION = "0009_document_upload_options.sql"


def _older_database(path: Path) -> None:
    """The database as the migrations before 0009 leave it."""
    conn = database_before(path, MIGRATION)
    for doc_id in ("precise", "fast", "none"):
        conn.execute(
            "INSERT INTO documents (id, workspace_id, path, name, mime, status, chunk_size,"
            " chunk_overlap, created_at, updated_at) VALUES (?, ?, ?, ?, 'text/plain',"
            " 'completed', 1000, 200, '2024-01-01T00:00:00+00:00',"
            " '2024-01-01T00:00:00+00:00')",
            (doc_id, WS, f"{doc_id}.txt", f"{doc_id}.txt"),
        )
    kept = {
        ("upload", "precise"): {"mode": "precise", "embeddingModelId": "cfg-1"},
        ("upload", "fast"): {"mode": "fast", "embeddingModelId": None},
        ("upload", "deleted-long-ago"): {"mode": "precise", "embeddingModelId": None},
        ("user", "u-1"): {"theme": "dark"},
    }
    conn.executemany(
        "INSERT INTO settings (scope, owner, value) VALUES (?, ?, ?)",
        [(scope, owner, json.dumps(value)) for (scope, owner), value in kept.items()],
    )
    conn.commit()
    conn.close()


def test_each_document_takes_its_upload_options_from_the_settings(tmp_path):
    path = tmp_path / "bunko.db"
    _older_database(path)
    db = SqliteDatabase(path)  # opening it applies what is pending
    try:
        metadata, settings = SqliteMetadataStore(db), SqliteSettingsStore(db)
        options = {d.id: (d.mode, d.embedding_model_id) for d in metadata.iter_documents(WS)}
        assert options == {
            "precise": ("precise", "cfg-1"),
            "fast": ("fast", None),
            "none": ("fast", None),
        }
        assert settings.list_settings("upload") == []
        assert settings.get_settings("user", "u-1") == {"theme": "dark"}
        assert db.migrate() == []  # applied once
    finally:
        db.close()
