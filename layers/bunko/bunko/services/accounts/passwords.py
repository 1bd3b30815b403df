"""Password hashing: argon2 through pwdlib, with hash upgrades and a dummy check.

`verify` always spends one hash's worth of time, whether or not the user exists, so the
response time of a login does not tell which usernames are registered.

Each argon2id hash takes 64 MiB while it runs, and anyone may ask for one (a login for a
name that does not exist checks the dummy): 40 at once took the server from ~370 MB to
1.9 GB. So at most `at_once` hashes run together in a process; the next waits up to
`wait_seconds` for its turn, then is refused with 429 and Retry-After.

Two costs (`BUNKO_PASSWORD_HASH_COST`): "strong", the default, pwdlib's argon2id (m=64 MiB, t=3,
p=4; ~0.2 s of CPU a hash on a 2-core machine); "light", OWASP's first argon2id setting
(m=19 MiB, t=2, p=1; ~8x less CPU), for small machines and for the test suite, which signs
people in by the hundred. A hash made under the other cost still verifies and is rehashed at
the next login (`verify_and_update`).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import Literal, TypeVar

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

from bunko.errors import TooManyRequestsError

MIN_PASSWORD_LENGTH = 8
# argon2 reads the whole password; a bound keeps a megabyte "password" from costing a core.
MAX_PASSWORD_LENGTH = 256
HASHES_AT_ONCE = 2
HASH_WAIT_SECONDS = 10.0
RETRY_AFTER_SECONDS = 5
T = TypeVar("T")
HashCost = Literal["strong", "light"]
ARGON2_COSTS: dict[str, dict[str, int]] = {
    "strong": {"memory_cost": 65536, "time_cost": 3, "parallelism": 4},
    "light": {"memory_cost": 19456, "time_cost": 2, "parallelism": 1},
}


def argon2_hash(cost: HashCost = "strong") -> PasswordHash:
    """pwdlib's argon2id at `cost` (ARGON2_COSTS)."""
    return PasswordHash((Argon2Hasher(**ARGON2_COSTS[cost]),))


class PasswordHasher:
    def __init__(
        self,
        hasher: PasswordHash | None = None,
        *,
        cost: HashCost = "strong",
        at_once: int = HASHES_AT_ONCE,
        wait_seconds: float = HASH_WAIT_SECONDS,
    ) -> None:
        self._hash = hasher or argon2_hash(cost)
        self._turns = threading.BoundedSemaphore(max(at_once, 1))
        self.wait_seconds = wait_seconds
        self._dummy = self._hash.hash(secrets.token_urlsafe(16))

    def hash(self, password: str) -> str:
        return self._bounded(lambda: self._hash.hash(password))

    def verify(self, password: str, stored: str | None) -> tuple[bool, str | None]:
        """(valid, upgraded hash or None). With `stored` None, checks a dummy hash and
        returns (False, None). TooManyRequestsError when no turn comes in time."""
        if stored is None:
            self._bounded(lambda: self._hash.verify(password, self._dummy))
            return False, None
        return self._bounded(lambda: self._hash.verify_and_update(password, stored))

    def _bounded(self, work: Callable[[], T]) -> T:
        if not self._turns.acquire(timeout=self.wait_seconds):
            raise TooManyRequestsError(
                "too many sign-ins at once; try again in a few seconds",
                retry_after=RETRY_AFTER_SECONDS,
            )
        try:
            return work()
        finally:
            self._turns.release()
