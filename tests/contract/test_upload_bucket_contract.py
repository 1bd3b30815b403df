"""The upload token bucket (services/bounds/token_bucket.py) on every backend's shared counter
store, SQLite and DynamoDB (moto): a burst at once, then the sustained rate; the refusal's
Retry-After is the exact wait for the next token; many takes at once never let more through
than the bucket holds (the store's update is atomic)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from bunko.errors import ServiceUnavailableError, TooManyRequestsError
from bunko.services.bounds.token_bucket import TokenBucket
from tests.contract.accounts import AccountStores

START = datetime(2025, 1, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def bucket(accounts: AccountStores, clock: Clock, *, burst: int, per_minute: int) -> TokenBucket:
    return TokenBucket(
        accounts.attempts, burst=burst, per_minute=per_minute, what="upload", now=clock
    )


def test_a_burst_then_the_rate_with_the_exact_wait(accounts: AccountStores):
    clock = Clock()
    uploads = bucket(accounts, clock, burst=5, per_minute=120)  # a token every 0.5 s
    for _ in range(5):
        uploads.take("ws-a")
    with pytest.raises(TooManyRequestsError) as refused:
        uploads.take("ws-a")
    assert refused.value.retry_after == 1  # 0.5 s, rounded up to a whole second
    assert "try again in 1 second" in str(refused.value)
    uploads.take("ws-b")  # another workspace has its own bucket
    clock.now += timedelta(seconds=0.5)
    uploads.take("ws-a")  # one token back
    with pytest.raises(TooManyRequestsError):
        uploads.take("ws-a")
    clock.now += timedelta(minutes=10)  # refilled, but never above the burst
    for _ in range(5):
        uploads.take("ws-a")
    with pytest.raises(TooManyRequestsError):
        uploads.take("ws-a")


def test_the_wait_counts_down_to_the_next_token(accounts: AccountStores):
    clock = Clock()
    slow = bucket(accounts, clock, burst=2, per_minute=2)  # a token every 30 s
    slow.take("ws")
    slow.take("ws")
    for elapsed, wait in ((0, 30), (10, 20), (29.2, 1)):
        clock.now = START + timedelta(seconds=elapsed)
        with pytest.raises(TooManyRequestsError) as refused:
            slow.take("ws")
        assert refused.value.retry_after == wait
    clock.now = START + timedelta(seconds=30)
    slow.take("ws")


def test_a_refusal_takes_no_token(accounts: AccountStores):
    clock = Clock()
    uploads = bucket(accounts, clock, burst=1, per_minute=60)
    uploads.take("ws")
    for _ in range(5):
        with pytest.raises(TooManyRequestsError):
            uploads.take("ws")
    clock.now += timedelta(seconds=1)
    uploads.take("ws")  # the refusals above did not push the next token further away


def test_rate_zero_is_off(accounts: AccountStores):
    off = bucket(accounts, Clock(), burst=1, per_minute=0)
    for _ in range(50):
        off.take("ws")


def test_parallel_takes_pass_exactly_the_burst(accounts: AccountStores):
    uploads = bucket(accounts, Clock(), burst=12, per_minute=1)
    passed, refused = [], []

    def take() -> None:
        try:
            uploads.take("ws")
            passed.append(1)
        except TooManyRequestsError:
            refused.append(1)

    threads = [threading.Thread(target=take) for _ in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (len(passed), len(refused)) == (12, 18)


def test_losing_every_race_is_a_short_wait_not_an_error():
    class Contended:
        def update_attempts(self, keys, change):
            raise ServiceUnavailableError("too many at once")

    busy = TokenBucket(Contended(), burst=5, per_minute=60, what="upload")  # type: ignore[arg-type]
    with pytest.raises(TooManyRequestsError) as refused:
        busy.take("ws")
    assert refused.value.retry_after == 1
