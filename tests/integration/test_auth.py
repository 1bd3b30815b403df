"""AuthService over the real SQLite stores: register, login, hash upgrade, change password,
the throttle (with a controlled clock), and JWT checks (expiry, issuer, signature)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jwt
import pytest
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

from bunko.adapters.local.sqlite.accounts import SqliteLoginAttemptStore, SqliteUserStore
from bunko.adapters.local.sqlite.store import SqliteMetadataStore
from bunko.errors import (
    AuthenticationError,
    ConflictError,
    NotFoundError,
    TooManyRequestsError,
    ValidationError,
)
from bunko.services.accounts.auth import AuthService
from bunko.services.accounts.passwords import PasswordHasher
from bunko.services.accounts.throttle import LoginThrottle
from bunko.services.accounts.tokens import JwtVerifier, TokenService

pytestmark = pytest.mark.slow  # argon2 hashes by the dozen (lockouts, upgrades)

SECRET = "s" * 40


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_auth(db, clock, *, tokens: TokenService | None = None, max_failures: int = 3):
    users = SqliteUserStore(db)
    tokens = tokens or TokenService(secret=SECRET, issuer="bunko", lifetime=timedelta(hours=1))
    throttle = LoginThrottle(
        SqliteLoginAttemptStore(db),
        max_failures=max_failures,
        lockout=timedelta(seconds=60),
        max_lockout=timedelta(seconds=600),
        now=clock,
    )
    auth = AuthService(
        users=users,
        metadata=SqliteMetadataStore(db),
        hasher=PasswordHasher(),
        tokens=tokens,
        throttle=throttle,
    )
    return auth, JwtVerifier(tokens, users)


@pytest.fixture
def auth(db, clock):
    return make_auth(db, clock)


def test_register_gives_a_personal_workspace_and_a_working_token(auth, db):
    service, verifier = auth
    alice = service.register("alice", "correct horse")
    bob = service.register("ボブ", "battery staple")  # any script's letters
    assert alice.workspace_id != bob.workspace_id
    assert SqliteMetadataStore(db).get_workspace(alice.workspace_id) is not None
    assert alice.password_hash.startswith("$argon2id$")
    token, _ = service.login("alice", "correct horse")
    principal = verifier.verify(token)
    assert principal.user_id == alice.id and principal.workspace_id == alice.workspace_id
    assert not principal.is_admin and not principal.has("admin") and principal.has("kb:write")


def test_usernames_are_unique_regardless_of_case_and_width(auth):
    service, _ = auth
    service.register("Alice", "password-1")
    with pytest.raises(ConflictError):
        service.register("ａｌｉｃｅ", "password-2")
    # and login finds the user by either spelling
    assert service.login("ALICE", "password-1")[1].username == "Alice"


@pytest.mark.parametrize(
    ("username", "password"),
    [("a", "long enough"), ("has space", "long enough"), ("alice", "short"), ("alice", " " * 9)],
)
def test_bad_usernames_and_passwords_are_refused(auth, username, password):
    with pytest.raises(ValidationError):
        auth[0].register(username, password)


def test_wrong_password_and_unknown_user_fail_alike(auth):
    service, _ = auth
    service.register("alice", "correct horse")
    with pytest.raises(AuthenticationError) as wrong:
        service.login("alice", "wrong horse")
    with pytest.raises(AuthenticationError) as unknown:
        service.login("nobody", "wrong horse")
    assert str(wrong.value) == str(unknown.value)


def test_login_upgrades_an_outdated_hash(db, clock):
    service, _ = make_auth(db, clock)
    user = service.register("alice", "correct horse")
    weak = PasswordHash((Argon2Hasher(time_cost=1, memory_cost=8192),))
    user.password_hash = weak.hash("correct horse")
    service.users.save_user(user)
    service.login("alice", "correct horse")
    upgraded = service.users.get_user(user.id).password_hash
    assert upgraded != user.password_hash and "t=1," not in upgraded
    service.login("alice", "correct horse")  # the new hash verifies


def test_change_password_invalidates_older_tokens(auth):
    service, verifier = auth
    user = service.register("alice", "correct horse")
    old_token, _ = service.login("alice", "correct horse")
    new_token, _ = service.change_password(user.id, "correct horse", "new password!")
    assert verifier.verify(old_token) is None
    assert verifier.verify(new_token).user_id == user.id
    with pytest.raises(AuthenticationError):
        service.login("alice", "correct horse")
    assert service.login("alice", "new password!")


def test_change_password_checks_the_current_one(auth):
    service, _ = auth
    user = service.register("alice", "correct horse")
    with pytest.raises(ValidationError, match="currentPassword"):
        service.change_password(user.id, "wrong", "new password!")
    with pytest.raises(ValidationError, match="newPassword"):
        service.change_password(user.id, "correct horse", "short")
    with pytest.raises(NotFoundError):
        service.change_password("no-such-id", "correct horse", "new password!")


def test_repeated_failures_lock_the_username_even_for_the_right_password(auth, clock):
    service, _ = auth
    service.register("alice", "correct horse")
    for _ in range(3):
        with pytest.raises(AuthenticationError):
            service.login("alice", "wrong")
    with pytest.raises(TooManyRequestsError) as locked:
        service.login("alice", "correct horse")
    assert locked.value.retry_after == 60
    clock.now += timedelta(seconds=61)
    assert service.login("alice", "correct horse")  # unlocked, and the count resets
    with pytest.raises(AuthenticationError):
        service.login("alice", "wrong")
    assert service.login("alice", "correct horse")


def test_lockout_doubles_and_is_capped(auth, clock):
    service, _ = auth
    waits = []
    for _ in range(7):
        with pytest.raises((AuthenticationError, TooManyRequestsError)):
            service.login("ghost", "wrong")
        try:
            service.throttle.check("ghost")
        except TooManyRequestsError as exc:
            waits.append(exc.retry_after)
            clock.now += timedelta(seconds=exc.retry_after)
    assert waits == [60, 120, 240, 480, 600]  # an unknown name is throttled alike


def test_expired_tokens_and_foreign_tokens_are_refused(db, clock):
    issued_at = datetime.now(UTC) - timedelta(hours=2)
    old = TokenService(
        secret=SECRET, issuer="bunko", lifetime=timedelta(hours=1), now=lambda: issued_at
    )
    service, verifier = make_auth(db, clock, tokens=old)
    user = service.register("alice", "correct horse")
    expired = old.issue(user)
    assert verifier.verify(expired) is None

    fresh = TokenService(secret=SECRET, issuer="bunko", lifetime=timedelta(hours=1))
    claims = {"sub": user.id, "ver": 0, "iat": datetime.now(UTC)}
    claims["exp"] = claims["iat"] + timedelta(hours=1)
    other_issuer = jwt.encode({**claims, "iss": "elsewhere"}, SECRET, algorithm="HS256")
    other_secret = jwt.encode({**claims, "iss": "bunko"}, "x" * 40, algorithm="HS256")
    unsigned = jwt.encode({**claims, "iss": "bunko"}, None, algorithm="none")
    good = jwt.encode({**claims, "iss": "bunko"}, SECRET, algorithm="HS256")
    checker = JwtVerifier(fresh, service.users)
    assert checker.verify(good).user_id == user.id
    for token in (other_issuer, other_secret, unsigned, "not-a-jwt", "bk_an-api-key"):
        assert checker.verify(token) is None


def test_deleted_users_tokens_stop_working(auth):
    service, verifier = auth
    user = service.register("alice", "correct horse")
    token, _ = service.login("alice", "correct horse")
    assert service.users.delete_user(user.id)
    assert verifier.verify(token) is None
