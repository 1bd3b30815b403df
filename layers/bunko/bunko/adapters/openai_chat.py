"""OpenAIChat: streaming chat completions through the official `openai` SDK, for any
OpenAI-compatible server (OpenAI, Gemini's OpenAI endpoint, Ollama, vLLM, llama.cpp).

The server is a user's (a model config), so the answer is bounded whatever it does: at most
the request's max_tokens pieces of text (a real server sends a token or more a piece) and
CHAT_CHARS_PER_TOKEN characters a token, then the connection is closed as when the reader
leaves; over a bounded client (adapters/bounded_http.py) that follows no redirect, ends
the answer after `max_seconds` and refuses one that passes CHAT_BYTES_PER_TOKEN a token."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import openai

from bunko.adapters.bounded_http import RefusedAnswer, bounded_client
from bunko.adapters.outbound_limits import (
    ANSWER_SLACK,
    CHAT_BYTES_PER_TOKEN,
    CHAT_CHARS_PER_TOKEN,
    CHAT_SECONDS,
)
from bunko.adapters.retrying import call_with_retries
from bunko.ports.chat import ChatRequest, ProviderError

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 120.0  # each wait: connecting, the first token, the next one


def provider_error(
    provider: str, model: str, base_url: str | None, exc: Exception
) -> ProviderError:
    """What went wrong, and what to change in the model config, for one SDK error."""
    where = base_url or "the provider's default endpoint"
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return ProviderError(provider, "the API key was refused: check the model config's apiKey")
    if isinstance(exc, openai.NotFoundError):
        return ProviderError(
            provider, f"model {model!r} was not found at {where}: check modelId and baseUrl"
        )
    if isinstance(exc, openai.RateLimitError):
        return ProviderError(provider, "rate limited: try again shortly", retryable=True)
    if isinstance(exc, openai.APITimeoutError):
        return ProviderError(provider, f"no answer from {where} in time", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return ProviderError(provider, f"cannot reach {where}: check baseUrl", retryable=True)
    if isinstance(exc, openai.BadRequestError):
        text = str(exc).lower()
        if "context" in text or "too long" in text or "maximum" in text:
            return ProviderError(
                provider, "the prompt is too long for the model: lower topK or maxTokens"
            )
        return ProviderError(provider, f"the request was refused: {exc}")
    if isinstance(exc, RefusedAnswer):
        return ProviderError(provider, str(exc))
    if isinstance(exc, openai.InternalServerError):
        return ProviderError(provider, f"the server failed ({exc})", retryable=True)
    return ProviderError(provider, f"unexpected error: {exc}")


class OpenAIChat:
    def __init__(
        self,
        *,
        provider: str,
        model: str,
        api_key: str | None,
        base_url: str | None,
        timeout: float = TIMEOUT_SECONDS,
        max_seconds: float = CHAT_SECONDS,
    ) -> None:
        self.name = model
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.timeout = timeout
        self.max_seconds = max_seconds

    def _client(self, request: ChatRequest) -> openai.OpenAI:
        """An SDK client whose answer may take at most what `request` asks for."""
        http = bounded_client(
            max_bytes=request.max_tokens * CHAT_BYTES_PER_TOKEN + ANSWER_SLACK,
            max_seconds=self.max_seconds,
            timeout=self.timeout,
        )
        # Local servers (llama.cpp, Ollama) take no key; the SDK insists on one.
        return openai.OpenAI(
            api_key=self.api_key or "none",
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            http_client=http,
        )

    def _open(self, client: openai.OpenAI, request: ChatRequest):
        try:
            return client.chat.completions.create(
                model=self.model,
                messages=[{"role": m.role, "content": m.content} for m in request.messages],
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                stream=True,
            )
        except (openai.OpenAIError, RefusedAnswer) as exc:
            raise provider_error(self.provider, self.model, self.base_url, exc) from exc

    def stream(self, request: ChatRequest) -> Iterator[str]:
        client = self._client(request)
        try:
            response = call_with_retries(lambda: self._open(client, request))
            try:
                yield from self._bounded(response, request.max_tokens)
            except (openai.OpenAIError, RefusedAnswer) as exc:
                raise provider_error(self.provider, self.model, self.base_url, exc) from exc
            finally:
                response.close()  # closing the connection stops generation on the server
        finally:
            client.close()

    def _bounded(self, response, max_tokens: int) -> Iterator[str]:
        """The answer's text, cut at `max_tokens` pieces or their characters' worth."""
        pieces, chars = 0, max_tokens * CHAT_CHARS_PER_TOKEN
        for chunk in response:
            text = chunk.choices[0].delta.content if chunk.choices else None
            if not text:
                continue
            pieces += 1
            if pieces > max_tokens or len(text) > chars:
                if len(text) > chars > 0:
                    yield text[:chars]
                log.warning("%s answered past max_tokens %d; cut off", self.provider, max_tokens)
                return
            chars -= len(text)
            yield text
