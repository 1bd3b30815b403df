"""BedrockChat: Claude, Nova, Llama... through bedrock-runtime ConverseStream."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from bunko.adapters.aws.bedrock_embedder import RETRYABLE_CODES
from bunko.adapters.retrying import call_with_retries
from bunko.ports.chat import ChatMessage, ChatRequest, ProviderError

PROVIDER = "bedrock"


def bedrock_error(model: str, exc: Exception) -> ProviderError:
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        code = code[:1].upper() + code[1:]  # stream errors say throttlingException
        text = exc.response.get("Error", {}).get("Message", "") or str(exc)
        if code in RETRYABLE_CODES or code == "ModelStreamErrorException":
            return ProviderError(PROVIDER, f"{code}: {text}; try again shortly", retryable=True)
        if code == "AccessDeniedException":
            return ProviderError(
                PROVIDER,
                f"access to {model} is denied: enable the model under Bedrock > Model access in "
                "this region and allow bedrock:InvokeModelWithResponseStream on it",
            )
        if code == "ResourceNotFoundException":
            return ProviderError(PROVIDER, f"model {model} not found in this region: check modelId")
        if code == "ValidationException" and ("too long" in text.lower() or "token" in text):
            return ProviderError(
                PROVIDER, f"the prompt is too long for {model}: lower topK or maxTokens"
            )
        return ProviderError(PROVIDER, f"{code or 'error'}: {text}")
    return ProviderError(PROVIDER, f"cannot reach Bedrock ({exc})", retryable=True)


def converse_messages(messages: Sequence[ChatMessage]) -> tuple[list[dict], list[dict]]:
    """(system, messages) in Converse's shape: system apart, turns alternating from a user."""
    system = [{"text": m.content} for m in messages if m.role == "system"]
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].append({"text": message.content})
        elif turns or role == "user":
            turns.append({"role": role, "content": [{"text": message.content}]})
    return system, turns


class BedrockChat:
    def __init__(self, client: Any, *, model: str) -> None:
        self.client = client
        self.model = model
        self.name = model

    def _open(self, request: ChatRequest) -> Any:
        system, messages = converse_messages(request.messages)
        options: dict[str, Any] = {
            "modelId": self.model,
            "messages": messages,
            "inferenceConfig": {
                "temperature": request.temperature,
                "maxTokens": request.max_tokens,
            },
        }
        if system:
            options["system"] = system
        try:
            return self.client.converse_stream(**options)["stream"]
        except (ClientError, BotoCoreError) as exc:
            raise bedrock_error(self.model, exc) from exc

    def stream(self, request: ChatRequest) -> Iterator[str]:
        events = call_with_retries(lambda: self._open(request))
        try:
            for event in events:
                text = event.get("contentBlockDelta", {}).get("delta", {}).get("text")
                if text:
                    yield text
        except (ClientError, BotoCoreError) as exc:
            raise bedrock_error(self.model, exc) from exc
        finally:
            events.close()  # stop reading: Bedrock stops when the connection closes
