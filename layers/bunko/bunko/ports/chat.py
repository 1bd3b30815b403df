"""Chat models and rerankers: what the chat service needs to answer with sources."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

# The offline extractive answerer's model name: the default, needing no model config.
EXTRACTIVE_MODEL = "bunko-extractive"


@dataclass(frozen=True)
class ChatMessage:
    role: str  # system | user | assistant
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One answer to generate. Generative models read `messages` (the grounded prompt);
    an extractive model reads `question`, `passages` (numbered from 1) and `language`."""

    messages: Sequence[ChatMessage]
    question: str = ""
    passages: Sequence[str] = field(default_factory=tuple)
    language: str = "en"
    temperature: float = 0.7
    max_tokens: int = 2048


class ProviderError(Exception):
    """A model provider failed. The message names the provider and what to fix;
    `retryable` says whether trying again later may succeed (rate limit, timeout)."""

    def __init__(self, provider: str, message: str, *, retryable: bool = False) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.retryable = retryable


class ChatModel(Protocol):
    name: str

    def stream(self, request: ChatRequest) -> Iterator[str]:
        """Text deltas as the model produces them. Closing the iterator stops generation
        (the connection to the provider is closed). Raises ProviderError."""


@dataclass(frozen=True)
class RerankHit:
    index: int  # position in the documents given
    score: float


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[RerankHit]:
        """The most relevant documents first, at most `top_n`. Raises ProviderError."""


class ModelResolver(Protocol):
    """Turns a user's model choices into models; keys are decrypted only here, per call."""

    def chat_model(self, workspace_id: str, config_id: str | None) -> ChatModel: ...
    def reranker(self, workspace_id: str, config_id: str) -> Reranker: ...
