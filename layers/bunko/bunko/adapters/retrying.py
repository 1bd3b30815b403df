"""Retries for model providers: only errors the provider marks retryable, with jittered
exponential backoff, and only before the first token (a half-streamed answer is not redone)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from bunko.ports.chat import ProviderError

T = TypeVar("T")


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, ProviderError) and exc.retryable


def call_with_retries(
    call: Callable[[], T],
    *,
    attempts: int = 3,
    max_backoff: float = 8.0,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    retrying = Retrying(
        retry=retry_if_exception(_retryable),
        wait=wait_random_exponential(multiplier=0.5, max=max_backoff),
        stop=stop_after_attempt(attempts),
        sleep=sleep,
        reraise=True,
    )
    return retrying(call)
