"""Password hashing: argon2 through pwdlib, with hash upgrades and a dummy check.

`verify` always spends one hash's worth of time, whether or not the user exists, so the
response time of a login does not tell which usernames are registered.
"""

from __future__ import annotations

import secrets

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

MIN_PASSWORD_LENGTH = 8
# argon2 reads the whole password; a bound keeps a megabyte "password" from costing a core.
MAX_PASSWORD_LENGTH = 256


class PasswordHasher:
    def __init__(self, hasher: PasswordHash | None = None) -> None:
        self._hash = hasher or PasswordHash((Argon2Hasher(),))
        self._dummy = self._hash.hash(secrets.token_urlsafe(16))

    def hash(self, password: str) -> str:
        return self._hash.hash(password)

    def verify(self, password: str, stored: str | None) -> tuple[bool, str | None]:
        """(valid, upgraded hash or None). With `stored` None, checks a dummy hash and
        returns (False, None)."""
        if stored is None:
            self._hash.verify(password, self._dummy)
            return False, None
        return self._hash.verify_and_update(password, stored)
