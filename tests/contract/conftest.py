"""Adapters under contract. Each fixture is parametrised over every adapter of its port, so
the same suite proves the local and the AWS adapters alike (AWS params come from
`aws_params.py`; without their stand-ins they show as skipped, with the reason)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bunko.adapters.local.files import FileBlobStore
from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.research import SqliteResearchStore
from bunko.adapters.local.sqlite.store import SqliteMetadataStore
from tests.contract.accounts import AccountStores, sqlite_accounts
from tests.contract.params import adapter_params


def _sqlite_metadata(tmp_path: Path) -> Iterator[SqliteMetadataStore]:
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield SqliteMetadataStore(db)
    db.close()


def _file_blobs(tmp_path: Path) -> Iterator[FileBlobStore]:
    yield FileBlobStore(tmp_path / "blobs")


def _sqlite_research(tmp_path: Path) -> Iterator[SqliteResearchStore]:
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield SqliteResearchStore(db)
    db.close()


METADATA, METADATA_PARAMS = adapter_params({"sqlite": _sqlite_metadata}, "METADATA_FACTORIES")
BLOBS, BLOB_PARAMS = adapter_params({"files": _file_blobs}, "BLOB_FACTORIES")
ACCOUNTS, ACCOUNT_PARAMS = adapter_params({"sqlite": sqlite_accounts}, "ACCOUNT_FACTORIES")
RESEARCH, RESEARCH_PARAMS = adapter_params({"sqlite": _sqlite_research}, "RESEARCH_FACTORIES")


@pytest.fixture(params=METADATA_PARAMS)
def metadata_store(request: pytest.FixtureRequest, tmp_path: Path):
    yield from METADATA[request.param](tmp_path)


@pytest.fixture(params=BLOB_PARAMS)
def blob_store(request: pytest.FixtureRequest, tmp_path: Path):
    yield from BLOBS[request.param](tmp_path)


@pytest.fixture(params=ACCOUNT_PARAMS)
def accounts(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AccountStores]:
    yield from ACCOUNTS[request.param](tmp_path)


@pytest.fixture(params=RESEARCH_PARAMS)
def research_store(request: pytest.FixtureRequest, tmp_path: Path):
    yield from RESEARCH[request.param](tmp_path)
