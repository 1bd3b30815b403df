"""Fixtures shared by the integration tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bunko.adapters.local.sqlite.db import SqliteDatabase


@pytest.fixture
def db(tmp_path: Path) -> Iterator[SqliteDatabase]:
    """A fresh SQLite database file, closed after the test."""
    database = SqliteDatabase(tmp_path / "bunko.db")
    yield database
    database.close()
