"""ConfiguredModels: a user's model config (`/model-configs`) turned into a chat model or a
reranker, per call, so an API key is decrypted only when a model is about to be called."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from bunko.adapters.extractive_chat import NAME as EXTRACTIVE
from bunko.adapters.extractive_chat import ExtractiveChat
from bunko.domain.accounts import ModelConfig
from bunko.errors import ValidationError
from bunko.ports import Embedder
from bunko.ports.chat import ChatModel, Reranker
from bunko.services.embedding import ModelConfigService

# Providers without a base URL in their config use their own public endpoint.
DEFAULT_BASE_URLS = {"gemini": "https://generativelanguage.googleapis.com/v1beta/openai/"}
_REGION_IN_HOST = re.compile(r"bedrock[\w-]*\.([a-z]{2}(?:-gov)?-[a-z]+-\d)\.amazonaws\.com")

BotoFactory = Callable[[str, str | None], Any]  # (service, region) -> client


def bedrock_region(config: ModelConfig) -> str | None:
    """The region named in the config's base URL (a Bedrock endpoint), else the process's."""
    match = _REGION_IN_HOST.search(config.base_url or "")
    if match:
        return match.group(1)
    return os.environ.get("BUNKO_REGION") or os.environ.get("AWS_REGION")


def boto_factory(service: str, region: str | None) -> Any:
    import boto3
    from botocore.config import Config

    # Retries are ours (tenacity, only where Bedrock says so); long answers need a long read.
    config = Config(retries={"mode": "standard", "max_attempts": 1}, read_timeout=300)
    return boto3.client(service, region_name=region, config=config)  # type: ignore[call-overload]


class ConfiguredModels:
    """The ModelResolver of both shapes. No config chosen: the offline extractive answerer."""

    def __init__(
        self,
        configs: ModelConfigService | None,
        *,
        boto: BotoFactory | None = None,
        embedder_for: Callable[[str], Embedder | None] | None = None,
    ):
        self.configs = configs
        self.boto = boto  # None: this module's boto_factory, looked up at each call
        # the model that serves a workspace's searches: the offline answerer quotes by it
        # when the question shares no word with the passages
        self.embedder_for = embedder_for

    def _config(self, workspace_id: str, config_id: str, kind: str) -> ModelConfig:
        if self.configs is None:
            raise ValidationError("model configs are not available on this deployment")
        config = self.configs.get(workspace_id, config_id)
        if config.type != kind:
            raise ValidationError(f"model config {config_id} is a {config.type} model, not {kind}")
        self.configs.endpoint(config)  # where its baseUrl points now: refused if inside
        return config

    def _client(self, service: str, region: str | None) -> Any:
        # Looked up when a model is built, not when the services are: the permission
        # contract's recorder wraps `boto_factory` after the composition root has run.
        return (self.boto or boto_factory)(service, region)

    def chat_model(self, workspace_id: str, config_id: str | None) -> ChatModel:
        if config_id is None or config_id == EXTRACTIVE:
            embedder = self.embedder_for(workspace_id) if self.embedder_for else None
            return ExtractiveChat(embedder)
        config = self._config(workspace_id, config_id, "llm")
        if config.provider == "bedrock":
            from bunko.adapters.aws.bedrock_chat import BedrockChat

            client = self._client("bedrock-runtime", bedrock_region(config))
            return BedrockChat(client, model=config.model_id)
        from bunko.adapters.openai_chat import OpenAIChat

        return OpenAIChat(
            provider=f"{config.provider} ({config.name})",
            model=config.model_id,
            api_key=self.configs.api_key(workspace_id, config.id) if self.configs else None,
            base_url=config.base_url or DEFAULT_BASE_URLS.get(config.provider),
        )

    def reranker(self, workspace_id: str, config_id: str) -> Reranker:
        config = self._config(workspace_id, config_id, "rerank")
        if config.provider == "bedrock":
            from bunko.adapters.aws.bedrock_rerank import BedrockRerank

            client = self._client("bedrock-agent-runtime", bedrock_region(config))
            return BedrockRerank(client, model=config.model_id)
        if not config.base_url:
            raise ValidationError(f"rerank config {config.name!r} needs a baseUrl (…/v1)")
        from bunko.adapters.http_rerank import HttpRerank

        return HttpRerank(
            provider=f"{config.provider} ({config.name})",
            model=config.model_id,
            base_url=config.base_url,
            api_key=self.configs.api_key(workspace_id, config.id) if self.configs else None,
        )
