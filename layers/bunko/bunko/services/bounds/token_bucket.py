"""TokenBucket: a burst of `burst` events at once, then `per_minute` a minute, per key.

Kept as one timestamp per key (GCRA, the token bucket's exact equivalent): the "theoretical
arrival time" `tat`, stored in the shared counter store (the login-attempt store) as the
record's `locked_until`. The bucket is full while `tat` <= now; each event moves `tat` one
interval (60 / per_minute seconds) on; an event that would push `tat` more than `burst`
intervals past now is refused with the exact wait until the next token. Every update is
one atomic read-change-write of the store (a SQLite transaction, a conditional DynamoDB
write), so every worker and Lambda instance shares one bucket.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

from bunko.domain import utcnow
from bunko.domain.accounts import LoginAttempts
from bunko.errors import ServiceUnavailableError, TooManyRequestsError
from bunko.ports import LoginAttemptStore


class TokenBucket:
    def __init__(
        self,
        store: LoginAttemptStore,
        *,
        burst: int,
        per_minute: int,
        what: str,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        """`per_minute` 0 turns the bucket off; `what` names it in keys and refusals."""
        self.store = store
        self.burst = max(burst, 1)
        self.per_minute = per_minute
        self.what = what
        self._now = now

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=1) / self.per_minute

    def take(self, key: str) -> None:
        """Take one token for `key`, or raise TooManyRequestsError with `retry_after`: the
        whole seconds until a token is there (never 0)."""
        if not self.per_minute:
            return
        now = self._now()
        interval, capacity = self.interval, self.interval * self.burst

        def take_one(records: list[LoginAttempts]) -> list[LoginAttempts]:
            bucket = records[0]
            tat = max(bucket.locked_until or now, now) + interval
            if tat - capacity > now:
                raise self._refusal((tat - capacity - now).total_seconds())
            bucket.locked_until = tat
            return records

        try:
            self.store.update_attempts([f"bucket {self.what} {key}"], take_one)
        except ServiceUnavailableError:
            # Lost every optimistic race (many writers at once): a short wait settles it.
            raise self._refusal(1) from None

    def _refusal(self, seconds: float) -> TooManyRequestsError:
        wait = max(math.ceil(seconds), 1)
        unit = "second" if wait == 1 else "seconds"
        return TooManyRequestsError(
            f"{self.what} rate limit: {self.burst} at once, then {self.per_minute} a minute; "
            f"try again in {wait} {unit}",
            retry_after=wait,
        )
