"""Adapters under contract. Each fixture is parametrised over every adapter of its port, so
the same suite proves the local and the AWS adapters alike (AWS params come from
`aws_params.py` when its stand-ins are installed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bunko.adapters.local.files import FileBlobStore
from bunko.adapters.local.sqlite_db import SqliteDatabase
from bunko.adapters.local.sqlite_store import SqliteMetadataStore


def _sqlite_metadata(tmp_path: Path) -> Iterator[SqliteMetadataStore]:
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield SqliteMetadataStore(db)
    db.close()


def _file_blobs(tmp_path: Path) -> Iterator[FileBlobStore]:
    yield FileBlobStore(tmp_path / "blobs")


METADATA_FACTORIES: dict[str, Callable[[Path], Iterator]] = {"sqlite": _sqlite_metadata}
BLOB_FACTORIES: dict[str, Callable[[Path], Iterator]] = {"files": _file_blobs}

try:  # the AWS adapters register themselves when their stand-ins (moto) are importable
    from tests.contract import aws_params

    METADATA_FACTORIES.update(aws_params.METADATA_FACTORIES)
    BLOB_FACTORIES.update(aws_params.BLOB_FACTORIES)
except ImportError:
    pass


@pytest.fixture(params=sorted(METADATA_FACTORIES))
def metadata_store(request: pytest.FixtureRequest, tmp_path: Path):
    yield from METADATA_FACTORIES[request.param](tmp_path)


@pytest.fixture(params=sorted(BLOB_FACTORIES))
def blob_store(request: pytest.FixtureRequest, tmp_path: Path):
    yield from BLOB_FACTORIES[request.param](tmp_path)
