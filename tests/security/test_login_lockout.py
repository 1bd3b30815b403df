"""Finding 2 (and the lockout half of 5): 40 parallel logins raced the failure count (39 ×
401 and a 200), and a burst of wrong passwords locked any account, the admin included, for
everyone. Replayed over a real socket; clients bind distinct loopback addresses
(127.0.0.x) so the server sees an attacker and an owner at different addresses."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.e2e.rest_harness import ADMIN

pytestmark = pytest.mark.slow  # argon2 hashes by the dozen (parallel guesses, lockouts)

MAX_FAILURES = 5

# The settings of the module's live server (the `fresh_rest` fixture, tests/conftest.py).
# Strong hashes: each guess takes as long as in production, so parallel guesses overlap as long.
REST_SETTINGS = {
    "login_max_failures": MAX_FAILURES,
    "login_account_max_failures": 12,
    "password_hash_cost": "strong",
}


def login_from(url: str, address: str, username: str, password: str) -> int:
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(base_url=url, transport=transport, timeout=120) as client:
        response = client.post("/auth/login", json={"username": username, "password": password})
    return response.status_code


def test_forty_parallel_guesses_get_at_most_the_allowed_tries(fresh_rest):
    passwords = [f"wrong-{i}" for i in range(39)]
    passwords.insert(37, ADMIN[1])  # the right one comes late, as a lucky guess would
    with ThreadPoolExecutor(40) as pool:
        statuses = list(
            pool.map(lambda p: login_from(fresh_rest.url, "127.0.0.1", ADMIN[0], p), passwords)
        )
    tried = [s for s in statuses if s != 429]
    assert len(tried) <= MAX_FAILURES, statuses
    assert statuses.count(429) >= 40 - MAX_FAILURES
    assert set(tried) <= {200, 401}


def test_an_attacker_cannot_lock_the_owner_out(fresh_rest):
    for i in range(MAX_FAILURES + 3):
        assert login_from(fresh_rest.url, "127.0.0.1", ADMIN[0], f"guess-{i}") in (401, 429)
    # the attacker's address is locked, even for the right password...
    assert login_from(fresh_rest.url, "127.0.0.1", ADMIN[0], ADMIN[1]) == 429
    # ...while the owner, from elsewhere, logs in
    assert login_from(fresh_rest.url, "127.0.0.2", ADMIN[0], ADMIN[1]) == 200


def test_many_addresses_together_lock_the_account_for_everyone(fresh_rest):
    # 12 failures from 3 addresses (under each address's own limit of 5) reach the
    # per-account threshold: guessing from a botnet is bounded too.
    for address in ("127.0.0.3", "127.0.0.4", "127.0.0.5"):
        for i in range(4):
            assert login_from(fresh_rest.url, address, ADMIN[0], f"guess-{i}") == 401
    assert login_from(fresh_rest.url, "127.0.0.2", ADMIN[0], ADMIN[1]) == 429
