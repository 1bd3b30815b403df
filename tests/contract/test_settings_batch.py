"""SettingsStore.get_many_settings on every backend: one batch for a page of files (the
/knowledge-bases listing reads each file's upload options this way, not one GetItem each)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bunko.adapters.local.sqlite_db import SqliteDatabase
from bunko.adapters.local.sqlite_settings import SqliteSettingsStore


def _sqlite(tmp_path: Path) -> Iterator:
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield SqliteSettingsStore(db)
    db.close()


def _dynamodb(tmp_path: Path) -> Iterator:
    pytest.importorskip("moto", reason="moto (the DynamoDB stand-in) is not installed")
    from bunko.adapters.aws.dynamodb_settings import DynamoDBSettingsStore
    from bunko.adapters.aws.dynamodb_table import Table
    from tests.aws.stand_ins import TABLE, moto_aws

    with moto_aws() as aws:
        yield DynamoDBSettingsStore(Table(aws.dynamodb, TABLE))


@pytest.fixture(params=["sqlite", "dynamodb"])
def settings_store(request: pytest.FixtureRequest, tmp_path: Path):
    yield from {"sqlite": _sqlite, "dynamodb": _dynamodb}[request.param](tmp_path)


def test_get_many_returns_the_stored_documents_of_one_scope(settings_store):
    for i in range(130):  # past DynamoDB's 100-key BatchGetItem page
        settings_store.put_settings("upload", f"doc-{i:03}", {"mode": "precise", "n": i})
    settings_store.put_settings("user", "doc-001", {"other": "scope"})
    owners = [f"doc-{i:03}" for i in range(130)] + ["missing", "doc-001"]
    found = settings_store.get_many_settings("upload", owners)
    assert set(found) == {f"doc-{i:03}" for i in range(130)}
    assert found["doc-007"] == {"mode": "precise", "n": 7}
    assert settings_store.get_many_settings("upload", []) == {}
