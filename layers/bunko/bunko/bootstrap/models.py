"""The clients of the chat models and rerankers a user's model configs name, built per call
for services/chat/models.py (which decides which config, and checks it first)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from bunko.adapters.extractive_chat import ExtractiveChat
from bunko.domain.accounts import ModelConfig
from bunko.errors import ValidationError
from bunko.ports import Embedder
from bunko.ports.chat import ChatModel, Reranker
from bunko.services.chat import ChatModels
from bunko.services.embedding import ModelConfigService
from bunko.services.search import written_alike

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


class ModelClients:
    """Builds the client of a provider's model from a checked config (services/chat/models.py
    decides which config, and when)."""

    def __init__(self, *, boto: BotoFactory | None = None) -> None:
        self.boto = boto  # None: this module's boto_factory, looked up at each call

    def _client(self, service: str, region: str | None) -> Any:
        # Looked up when a model is built, not when the services are: the permission
        # contract's recorder wraps `boto_factory` after the composition root has run.
        return (self.boto or boto_factory)(service, region)

    def chat(self, config: ModelConfig, api_key: str | None) -> ChatModel:
        if config.provider == "bedrock":
            from bunko.adapters.aws.bedrock_chat import BedrockChat

            client = self._client("bedrock-runtime", bedrock_region(config))
            return BedrockChat(client, model=config.model_id)
        from bunko.adapters.openai_chat import OpenAIChat

        return OpenAIChat(
            provider=f"{config.provider} ({config.name})",
            model=config.model_id,
            api_key=api_key,
            base_url=config.base_url or DEFAULT_BASE_URLS.get(config.provider),
        )

    def rerank(self, config: ModelConfig, api_key: str | None) -> Reranker:
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
            api_key=api_key,
        )


def chat_models(
    configs: ModelConfigService | None,
    *,
    embedder_for: Callable[[str], Embedder | None] | None = None,
    boto: BotoFactory | None = None,
) -> ChatModels:
    """The ModelResolver of both shapes: no config chosen, the offline extractive answerer,
    quoting by the model that serves the workspace's searches (`embedder_for`)."""
    clients = ModelClients(boto=boto)
    return ChatModels(
        configs,
        chat=clients.chat,
        rerank=clients.rerank,
        offline=lambda ws: ExtractiveChat(
            embedder_for(ws) if embedder_for else None, same_language=written_alike
        ),
    )
