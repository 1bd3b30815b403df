"""Sign-ins wait for their turn in the event loop, not in a worker thread.

A login, registration or password change spends an argon2id hash, and at most a few run at
once (services/accounts/passwords.py). Run as plain sync routes, the ones waiting for their
turn would each hold one of the server's worker threads, and 40 of them take all of uvicorn's
default pool: every other request would wait behind them. So at most SIGN_INS_AT_ONCE
sign-ins take a worker thread in an app; the rest wait here, costing nothing but their
connection, for up to HASH_WAIT_SECONDS, then are refused with 429 and Retry-After.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
from starlette.requests import Request

from bunko.errors import TooManyRequestsError
from bunko.services.accounts import HASH_WAIT_SECONDS, RETRY_AFTER_SECONDS

SIGN_INS_AT_ONCE = 4
T = TypeVar("T")


async def in_turn(request: Request, work: Callable[[], T]) -> T:
    """`work()` in a worker thread once one of the app's sign-in turns is free."""
    state = request.app.state
    turns = getattr(state, "sign_in_turns", None)
    if turns is None:  # made in the app's own event loop, on its first sign-in
        turns = state.sign_in_turns = anyio.CapacityLimiter(SIGN_INS_AT_ONCE)
    with anyio.move_on_after(HASH_WAIT_SECONDS) as waited:
        await turns.acquire()
    if waited.cancelled_caught:
        raise TooManyRequestsError(
            "too many sign-ins at once; try again in a few seconds",
            retry_after=RETRY_AFTER_SECONDS,
        )
    try:
        return await anyio.to_thread.run_sync(work)
    finally:
        turns.release()
