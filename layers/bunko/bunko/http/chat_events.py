"""Runs ChatService.answer for a streaming door: in a worker thread (models and search are
blocking), one event at a time, and stops generation when the client goes away."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any

import anyio
from sse_starlette import EventSourceResponse
from starlette.background import BackgroundTask
from starlette.concurrency import iterate_in_threadpool

from bunko.services.chat import ChatEvent, ChatSlot

log = logging.getLogger(__name__)
INTERNAL_ERROR = "chat failed with an internal error; the server log has details"


def _guarded(events: Iterator[ChatEvent]) -> Iterator[ChatEvent]:
    try:
        yield from events
    except Exception:
        log.exception("chat failed")
        yield ChatEvent("error", INTERNAL_ERROR)


async def chat_events(
    answer: partial[Iterator[ChatEvent]],
) -> AsyncIterator[ChatEvent]:
    """`answer`: ChatService.answer with every argument but `cancelled`. When the consumer
    stops early (a disconnect cancels it), the answer is told, then closed, which closes
    the model's stream: no token is generated for a client that has left."""
    stop = threading.Event()
    events = answer(cancelled=stop.is_set)
    try:
        async for event in iterate_in_threadpool(_guarded(events)):
            yield event
    finally:
        stop.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(events.close)


def releasing(stream: AsyncIterator[str], slot: ChatSlot, **options: Any) -> EventSourceResponse:
    """The SSE response of `stream`, giving `slot` back when the stream ends, fails or the
    client leaves (and, should the stream never start, once the response is done)."""

    async def held() -> AsyncIterator[str]:
        try:
            async for item in stream:
                yield item
        finally:
            slot.release()

    return EventSourceResponse(held(), background=BackgroundTask(slot.release), **options)
