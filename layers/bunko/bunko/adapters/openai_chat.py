"""OpenAIChat: streaming chat completions through the official `openai` SDK, for any
OpenAI-compatible server (OpenAI, Gemini's OpenAI endpoint, Ollama, vLLM, llama.cpp)."""

from __future__ import annotations

from collections.abc import Iterator

import openai

from bunko.adapters.retrying import call_with_retries
from bunko.ports.chat import ChatRequest, ProviderError

TIMEOUT_SECONDS = 120.0


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
    ) -> None:
        self.name = model
        self.provider = provider
        self.model = model
        self.base_url = base_url
        # Local servers (llama.cpp, Ollama) take no key; the SDK insists on one.
        self.client = openai.OpenAI(
            api_key=api_key or "none", base_url=base_url, timeout=timeout, max_retries=0
        )

    def _open(self, request: ChatRequest):
        try:
            return self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": m.role, "content": m.content} for m in request.messages],
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                stream=True,
            )
        except openai.OpenAIError as exc:
            raise provider_error(self.provider, self.model, self.base_url, exc) from exc

    def stream(self, request: ChatRequest) -> Iterator[str]:
        response = call_with_retries(lambda: self._open(request))
        try:
            for chunk in response:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
        except openai.OpenAIError as exc:
            raise provider_error(self.provider, self.model, self.base_url, exc) from exc
        finally:
            response.close()  # closing the connection stops generation on the server
