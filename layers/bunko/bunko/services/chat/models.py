"""ChatModels: a user's model config (`/model-configs`) turned into a chat model or a
reranker, per call, so an API key is decrypted only when a model is about to be called.

The rules live here (which config, of which type, pointing where); building the client for
a provider is the composition root's (bootstrap/models.py), handed in as factories.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from bunko.domain.accounts import ModelConfig
from bunko.errors import ValidationError
from bunko.ports.chat import EXTRACTIVE_MODEL, ChatModel, Reranker
from bunko.services.embedding import ModelConfigService

Model = TypeVar("Model")
# (the config, its endpoint checked again; its decrypted API key or None) -> the client
ModelFactory = Callable[[ModelConfig, str | None], Model]


class ChatModels:
    """The ModelResolver of both shapes. No config chosen: `offline(workspace_id)`, the
    extractive answerer (it quotes by the model that serves the workspace's searches)."""

    def __init__(
        self,
        configs: ModelConfigService | None,
        *,
        chat: ModelFactory[ChatModel],
        rerank: ModelFactory[Reranker],
        offline: Callable[[str], ChatModel],
    ) -> None:
        self.configs = configs
        self.chat = chat
        self.rerank = rerank
        self.offline = offline

    def chat_model(self, workspace_id: str, config_id: str | None) -> ChatModel:
        if config_id is None or config_id == EXTRACTIVE_MODEL:
            return self.offline(workspace_id)
        config = self._config(workspace_id, config_id, "llm")
        return self.chat(config, self._key(workspace_id, config))

    def reranker(self, workspace_id: str, config_id: str) -> Reranker:
        config = self._config(workspace_id, config_id, "rerank")
        return self.rerank(config, self._key(workspace_id, config))

    def _config(self, workspace_id: str, config_id: str, kind: str) -> ModelConfig:
        if self.configs is None:
            raise ValidationError("model configs are not available on this deployment")
        config = self.configs.get(workspace_id, config_id)
        if config.type != kind:
            raise ValidationError(f"model config {config_id} is a {config.type} model, not {kind}")
        self.configs.endpoint(config)  # where its baseUrl points now: refused if inside
        return config

    def _key(self, workspace_id: str, config: ModelConfig) -> str | None:
        if config.provider == "bedrock" or self.configs is None:
            return None  # Bedrock signs with the function's role
        return self.configs.key_of(config)
