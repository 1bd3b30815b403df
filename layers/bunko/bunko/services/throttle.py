"""LoginThrottle: after repeated failed logins a username is refused for a while.

After `max_failures` consecutive failures the username is locked for `lockout`, doubling
with each further failure up to `max_lockout`. While locked, even the right password is
refused (so guessing cannot continue); a success resets the count, and failures older
than `forget_after` are forgotten. Unknown usernames are counted like known ones, so the
lockout reveals nothing about which accounts exist. Keys live in a store, so every
worker (and every Lambda instance) sees the same count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

from bunko.domain import utcnow
from bunko.domain.accounts import LoginAttempts
from bunko.errors import TooManyRequestsError
from bunko.ports import LoginAttemptStore


class LoginThrottle:
    def __init__(
        self,
        store: LoginAttemptStore,
        *,
        max_failures: int,
        lockout: timedelta,
        max_lockout: timedelta = timedelta(hours=1),
        forget_after: timedelta = timedelta(hours=1),
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.max_failures = max_failures
        self.lockout = lockout
        self.max_lockout = max(max_lockout, lockout)
        self.forget_after = forget_after
        self._now = now

    def check(self, key: str) -> None:
        """Raise TooManyRequestsError while `key` is locked."""
        attempts = self.store.get_attempts(key)
        now = self._now()
        if attempts and attempts.locked_until and attempts.locked_until > now:
            wait = math.ceil((attempts.locked_until - now).total_seconds())
            raise TooManyRequestsError(
                f"too many failed logins; try again in {wait} seconds", retry_after=wait
            )

    def failure(self, key: str) -> None:
        now = self._now()
        attempts = self.store.get_attempts(key) or LoginAttempts(key=key)
        if attempts.last_failure and now - attempts.last_failure > self.forget_after:
            attempts.failures = 0
        attempts.failures += 1
        attempts.last_failure = now
        extra = attempts.failures - self.max_failures
        if extra >= 0:
            # 2**extra overflows timedelta long before the cap matters: clamp the exponent.
            attempts.locked_until = now + min(self.lockout * 2 ** min(extra, 30), self.max_lockout)
        self.store.save_attempts(attempts)

    def success(self, key: str) -> None:
        self.store.clear_attempts(key)
