from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Security
from fastapi.security import HTTPAuthorizationCredentials

from bunko import __version__
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.errors import AuthenticationError
from bunko.http.deps import ServicesDep, bearer

router = APIRouter(tags=["health"])
# /health is public: its document count (a DynamoDB query on AWS) is read at most this often
# per process, so polling it, or a flood of anonymous calls, costs no reads.
COUNT_MAX_AGE = 30.0  # seconds


class RecentValue:
    """A value read again only when the last reading is older than `max_age`."""

    def __init__(self, max_age: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age = max_age
        self.clock = clock  # seconds, monotonic
        self._lock = threading.Lock()
        # by the key's id, with a weak reference telling a live key from a dead one's reused id
        self._read: dict[int, tuple[weakref.ref, float, int]] = {}

    def get(self, key: object, read: Callable[[], int]) -> int:
        with self._lock:
            now = self.clock()
            found = self._read.get(id(key))
            if found is None or found[0]() is not key or now - found[1] > self.max_age:
                found = (weakref.ref(key), now, read())
                self._read[id(key)] = found
            return found[2]


_document_count = RecentValue(COUNT_MAX_AGE)


@router.get("/health")
def health(
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> dict:
    """Liveness for anyone; with a valid token (a person's or an API key) also what a
    person checks first: backend, model, documents (read at most every COUNT_MAX_AGE
    seconds) and queue depth. A stranger learns only that the server is up: the queue and
    the default library's size told anyone when others uploaded (issue 46)."""
    up = {"status": "ok", "version": __version__}
    try:  # with auth off every caller is the admin, and sees everything
        services.identity.authenticate(credentials.credentials if credentials else None)
    except AuthenticationError:
        return up  # no token, or a stale one: a probe still learns the server is up
    return {
        **up,
        "backend": services.settings.backend,
        "embedder": services.status.model_name,
        "documents": _document_count.get(
            services, lambda: services.library.count_documents(DEFAULT_WORKSPACE_ID)
        ),
        "pending": services.status.queue_depth(),
    }


@router.get("/health/live")
def live() -> dict:
    """The process answers: no store is read, so a readiness probe (the Lambda Web Adapter's
    on AWS) costs nothing and a DynamoDB hiccup does not keep a function from starting."""
    return {"status": "ok", "version": __version__}
