"""The store half of the atomic lockout, on SQLite and DynamoDB (moto): parallel updates of
the same login counts never lose one, and a refused update writes nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from bunko.adapters.local.sqlite_accounts import SqliteLoginAttemptStore
from bunko.adapters.local.sqlite_db import SqliteDatabase
from bunko.domain.accounts import LoginAttempts
from bunko.ports import LoginAttemptStore


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request, tmp_path) -> Iterator[LoginAttemptStore]:
    if request.param == "sqlite":
        db = SqliteDatabase(tmp_path / "bunko.db")
        yield SqliteLoginAttemptStore(db)
        db.close()
        return
    pytest.importorskip("moto")
    from bunko.adapters.aws.dynamodb_table import Table
    from bunko.adapters.aws.dynamodb_users import DynamoDBLoginAttemptStore
    from tests.aws.stand_ins import TABLE, moto_aws

    with moto_aws() as aws:
        yield DynamoDBLoginAttemptStore(Table(AtomicCalls(aws.dynamodb), TABLE))


class AtomicCalls:
    """moto's DynamoDB is not thread-safe within one call; real DynamoDB applies each call
    atomically. Serialising calls (not read-then-write sequences) gives that model, so the
    races between one attempt's read and its write still happen."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method):
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return method(*args, **kwargs)

        return call


def add_one(records: list[LoginAttempts]) -> list[LoginAttempts]:
    for record in records:
        record.failures += 1
    return records


def test_parallel_updates_lose_no_count(store):
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda _: store.update_attempts(["pair", "account"], add_one), range(40)))
    assert store.get_attempts("pair").failures == 40
    assert store.get_attempts("account").failures == 40


def test_a_write_between_read_and_write_is_not_lost(store):
    if isinstance(store, SqliteLoginAttemptStore):
        pytest.skip("SQLite holds the write lock from read to write: nothing comes between")
    inner_done = []

    def outer(records: list[LoginAttempts]) -> list[LoginAttempts]:
        if not inner_done:
            inner_done.append(True)  # another attempt lands after this read
            store.update_attempts(["k"], add_one)
        return add_one(records)

    store.update_attempts(["k"], outer)
    assert store.get_attempts("k").failures == 2


def test_a_refused_update_writes_nothing(store):
    store.update_attempts(["k"], add_one)

    def refuse(records: list[LoginAttempts]) -> list[LoginAttempts]:
        records[0].failures = 99
        raise RuntimeError("locked")

    with pytest.raises(RuntimeError):
        store.update_attempts(["k"], refuse)
    assert store.get_attempts("k").failures == 1
    store.clear_attempts("k")
    store.update_attempts(["k"], add_one)  # a cleared count starts again
    assert store.get_attempts("k").failures == 1
