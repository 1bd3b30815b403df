"""GroupRoles over every LibraryStore (SQLite, DynamoDB on moto): a sign-in's group sync
never leaves a library without an owner (issue 46). The person whose groups no longer make
them owner stays its last owner; once someone else owns it, the next sync applies."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.libraries import SqliteLibraryStore
from bunko.adapters.local.sqlite.store import SqliteMetadataStore
from bunko.domain.libraries import Library
from bunko.domain.sign_in import GroupRole
from bunko.services.accounts import GroupRoles
from tests.contract.params import MOTO_MISSING


def _sqlite(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield SqliteLibraryStore(db), SqliteMetadataStore(db)
    db.close()


def _dynamodb(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    from bunko.adapters.aws.dynamodb.libraries import DynamoDBLibraryStore
    from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
    from bunko.adapters.aws.dynamodb.table import Table
    from bunko.adapters.aws.s3.blobs import S3BlobStore
    from tests.aws.stand_ins import BUCKET, TABLE, moto_aws
    from tests.contract.aws_params import _OneRequestAtATime

    with moto_aws() as aws:
        blobs = S3BlobStore(aws.s3, bucket=BUCKET, prefix="blobs/")
        yield (
            DynamoDBLibraryStore(Table(_OneRequestAtATime(aws.dynamodb), TABLE)),
            DynamoDBMetadataStore(aws.dynamodb, table_name=TABLE, blobs=blobs),
        )


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param(
            "dynamodb",
            id="dynamodb",
            marks=[pytest.mark.aws]
            + ([pytest.mark.skip(reason=f"dynamodb: {MOTO_MISSING}")] if MOTO_MISSING else []),
        ),
    ]
)
def stores(request: pytest.FixtureRequest, tmp_path: Path):
    yield from {"sqlite": _sqlite, "dynamodb": _dynamodb}[request.param](tmp_path)


MAPPING = {
    "handbook-owners": GroupRole("Handbook", "owner"),
    "handbook-readers": GroupRole("Handbook", "viewer"),
}


def roles_of(stores) -> GroupRoles:
    library_store, metadata = stores
    return GroupRoles(store=library_store, metadata=metadata, mapping=MAPPING)


@pytest.mark.parametrize("groups_now", [[], ["handbook-readers"]], ids=["removed", "demoted"])
def test_a_sync_never_takes_the_last_owner_away(stores, groups_now, caplog):
    library_store, _ = stores
    roles = roles_of(stores)
    assert roles.sync("u-ada", ["handbook-owners"]) == {"Handbook": "owner"}
    handbook = library_store.get_library_by_name("Handbook")
    roles.sync("u-bob", ["handbook-readers"])

    with caplog.at_level(logging.WARNING, logger="bunko.services.accounts.group_roles"):
        assert roles.sync("u-ada", groups_now) == {"Handbook": "owner"}
    assert library_store.role_of(handbook.id, "u-ada") == "owner"
    assert "stays owner" in caplog.text and "u-ada" in caplog.text

    # someone else owns it now: the next sign-in applies what Ada's groups say
    roles.sync("u-bob", ["handbook-owners"])
    assert roles.sync("u-ada", groups_now)["Handbook"] == ("viewer" if groups_now else None)
    assert library_store.role_of(handbook.id, "u-ada") == ("viewer" if groups_now else None)
    assert library_store.role_of(handbook.id, "u-bob") == "owner"


def test_a_library_owned_by_hand_is_kept_by_its_other_owner(stores):
    """A mapped library whose other owner was added by hand: the sync may take the
    group's owner out, since an owner remains."""
    library_store, _ = stores
    library_store.add_library(Library(id="lib-h", name="Handbook"), owner="u-carol")
    roles = roles_of(stores)
    roles.sync("u-ada", ["handbook-owners"])
    assert roles.sync("u-ada", []) == {"Handbook": None}
    assert [(m.user_id, m.role) for m in library_store.members("lib-h")] == [("u-carol", "owner")]


def test_two_owners_losing_their_group_at_once_leave_one_owner(stores):
    library_store, _ = stores
    roles = roles_of(stores)
    for round_ in range(3):
        roles.sync("u-ada", ["handbook-owners"])
        roles.sync("u-bob", ["handbook-owners"])
        handbook = library_store.get_library_by_name("Handbook")
        start = threading.Barrier(2)

        def leave(user_id: str, start=start) -> None:
            start.wait()
            roles.sync(user_id, [])

        threads = [threading.Thread(target=leave, args=(u,)) for u in ("u-ada", "u-bob")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        owners = [m.user_id for m in library_store.members(handbook.id) if m.role == "owner"]
        assert len(owners) == 1, f"round {round_}: owners {owners}"
