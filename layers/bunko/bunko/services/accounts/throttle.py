"""LoginThrottle: repeated failed logins are slowed per (username, address), and an account
that many addresses guess at is locked for everyone.

Two counts are kept for every login: one for the username from this client address, one
for the username alone. After `max_failures` failures from one address that address is
locked out of that username for `lockout`, doubling with each further failure up to
`max_lockout`; the owner logging in from elsewhere is not affected. Only after
`account_max_failures` failures from all addresses together (far more than one address
can make under its own backoff in `forget_after`) is the username locked for everyone, for
`account_lockout` doubling likewise. While locked even the right password is refused;
a success resets both counts; failures older than `forget_after` are forgotten.

A third count is the client address's alone, at any username: every name has a count of its
own, so without it one address could try any number of names (each unknown one costing a
hash). After `address_max_failures` of them the address is locked likewise. A success does
not clear it: guessing right once must not buy another round of guesses.

Every attempt is counted BEFORE its password is checked, in one atomic update of both
counts in the store (a transaction on SQLite, a conditional write on DynamoDB): parallel
guesses cannot all pass a check that none of them has yet failed. A success then takes
its count back. Unknown usernames are counted like known ones, so the lockout reveals
nothing about which accounts exist.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

from bunko.domain import utcnow
from bunko.domain.accounts import LoginAttempts
from bunko.errors import TooManyRequestsError
from bunko.ports import LoginAttemptStore


def whole_address_key(address: str) -> str:
    """The count of one client address at every username (one space: no username key has
    any, and an `address_key` has two)."""
    return f"from {address}"


def address_key(key: str, address: str) -> str:
    """The count of `key` (a username key) from one client address. Addresses hold no
    spaces, so the address first keeps two pairs from ever sharing a key."""
    return f"from {address or '-'} {key}"


class LoginThrottle:
    def __init__(
        self,
        store: LoginAttemptStore,
        *,
        max_failures: int,
        lockout: timedelta,
        max_lockout: timedelta = timedelta(hours=1),
        forget_after: timedelta = timedelta(hours=1),
        account_max_failures: int = 50,
        account_lockout: timedelta = timedelta(minutes=15),
        address_max_failures: int = 1000,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.max_failures = max_failures
        self.lockout = lockout
        self.max_lockout = max(max_lockout, lockout)
        self.forget_after = forget_after
        self.account_max_failures = max(account_max_failures, max_failures)
        self.account_lockout = account_lockout
        self.address_max_failures = max(address_max_failures, max_failures)
        self._now = now

    def begin(self, key: str, address: str = "") -> None:
        """Count one attempt at `key` from `address` as failed until `success` says
        otherwise; raise TooManyRequestsError (counting nothing) while either is locked."""
        now = self._now()
        rules = (
            (self.max_failures, self.lockout, self.max_lockout),
            (
                self.account_max_failures,
                self.account_lockout,
                max(self.max_lockout, self.account_lockout),
            ),
            (self.address_max_failures, self.lockout, self.max_lockout),
        )
        # No address (an in-process caller): the per-address count is left out.
        keys = [address_key(key, address), key] + ([whole_address_key(address)] if address else [])

        def count(records: list[LoginAttempts]) -> list[LoginAttempts]:
            for record in records:
                if record.last_failure and now - record.last_failure > self.forget_after:
                    record.failures = 0
            _refuse_if_locked(records, now)
            for record, (limit, lockout, cap) in zip(records, rules, strict=False):
                record.failures += 1
                record.last_failure = now
                extra = record.failures - limit
                if extra >= 0:
                    # 2**extra overflows timedelta long before the cap: clamp the exponent.
                    wait = min(lockout * 2 ** min(extra, 30), cap)
                    record.locked_until = max(record.locked_until or now, now + wait)
            return records

        self.store.update_attempts(keys, count)

    def check(self, key: str, address: str = "") -> None:
        """Raise TooManyRequestsError while `key` from `address` is locked (reads only)."""
        keys = [address_key(key, address), key] + ([whole_address_key(address)] if address else [])
        records = [self.store.get_attempts(k) for k in keys]
        _refuse_if_locked([r for r in records if r is not None], self._now())

    def success(self, key: str, address: str = "") -> None:
        self.store.clear_attempts(address_key(key, address))
        self.store.clear_attempts(key)


def _refuse_if_locked(records: list[LoginAttempts], now: datetime) -> None:
    until = max((r.locked_until for r in records if r.locked_until), default=None)
    if until is not None and until > now:
        wait = math.ceil((until - now).total_seconds())
        raise TooManyRequestsError(
            f"too many failed logins; try again in {wait} seconds", retry_after=wait
        )
