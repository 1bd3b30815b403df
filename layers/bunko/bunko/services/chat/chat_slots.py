"""ChatSlots: how many chats one user may have in progress at once, across every chat door
(REST /chat/stream, /v1/chat/completions, MCP ask). A chat holds a worker thread, a model
call and a search for as long as it streams, so one user opening many would take the
server from everyone else; past the limit a new one is refused with 429 and Retry-After.

Counted in this process: `bunko serve` runs every door in one process. On AWS each Lambda
instance serves one stream at a time, so there the function's concurrency is the bound.
"""

from __future__ import annotations

import threading
from collections import Counter

from bunko.domain.auth import Principal
from bunko.errors import TooManyRequestsError

# A chat usually finishes within seconds; a client that waits this long finds a free slot.
RETRY_AFTER_SECONDS = 5


class ChatSlot:
    """One chat in progress; `release` frees it (once, however often it is called)."""

    def __init__(self, slots: ChatSlots | None, owner: str) -> None:
        self._slots, self._owner = slots, owner

    def release(self) -> None:
        slots, self._slots = self._slots, None
        if slots is not None:
            slots._release(self._owner)

    def __enter__(self) -> ChatSlot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def slot_owner(principal: Principal) -> str:
    """Whose count a chat takes: the signed-in person's (one count across every library
    and door), or an API key's own (issue 46: a library's keys shared one count, so one
    viewer's key could take every slot and the owner's agent got 429)."""
    if principal.user_id is not None:
        return principal.user_id
    if principal.api_key_id is not None:
        return f"key {principal.api_key_id}"
    return f"workspace:{principal.workspace_id}"


class ChatSlots:
    def __init__(self, per_user: int) -> None:
        self.per_user = per_user  # 0: no limit
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    def take(self, owner: str) -> ChatSlot:
        """A slot for `owner`, or TooManyRequestsError. The doors pass `slot_owner`."""
        if not self.per_user:
            return ChatSlot(None, owner)
        with self._lock:
            if self._open[owner] >= self.per_user:
                raise TooManyRequestsError(
                    f"too many chats at once: at most {self.per_user} in progress per user "
                    f"(BUNKO_CHAT_STREAMS_PER_USER); try again in {RETRY_AFTER_SECONDS} "
                    "seconds, when one has finished",
                    retry_after=RETRY_AFTER_SECONDS,
                )
            self._open[owner] += 1
        return ChatSlot(self, owner)

    def in_progress(self, owner: str) -> int:
        with self._lock:
            return self._open[owner]

    def _release(self, owner: str) -> None:
        with self._lock:
            self._open[owner] -= 1
            if self._open[owner] <= 0:
                del self._open[owner]
