"""The generations of model configs: an embedding model config (`/model-configs`, type embedding)
turned into an OpenAI-compatible embedder and its own index generation when the workspace
first uses it (as bootstrap/models.py does for chat models: the API key is decrypted only
then). The embedded shape's generation is `index/workspaces/<workspace>/<config>/`; the AWS
shape's an OpenSearch index of the config's (bootstrap/aws_generations.py).

A generation is opened once per process and kept, but its embedder follows the config: it is a
`ConfigEmbedder` (services/embedding/config_embedder.py), which this module gives the factory
of the config's client.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from bunko.config import Settings
from bunko.domain.accounts import ModelConfig
from bunko.errors import ValidationError
from bunko.ports import EmbeddingGeneration
from bunko.services.embedding import ConfigEmbedder, ModelConfigService, check_model_endpoint

if TYPE_CHECKING:
    from bunko.adapters.openai_embedder import OpenAIEmbedder

# A provider without a baseUrl in its config uses its public OpenAI-compatible endpoint.
PUBLIC_EMBEDDINGS = {
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/openai/",
}
# Said by a deployment built without model generations (one model for every workspace).
NO_ROUTES = (
    "this deployment serves every workspace with its own embedding model; a workspace's own "
    "model needs model configs (accounts): omit selectedEmbeddingId or set it to null"
)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def config_embedder(
    settings: Settings, configs: ModelConfigService, config: ModelConfig
) -> OpenAIEmbedder:
    """The OpenAI-compatible embedder of a workspace's model config (either shape)."""
    from bunko.adapters.openai_embedder import OpenAIEmbedder

    if config.type != "embedding":
        raise ValidationError(f"model config {config.id} is a {config.type} model")
    if config.provider == "bedrock":
        raise ValidationError(
            f"model config {config.name!r}: a workspace's own embedding model is an "
            "OpenAI-compatible endpoint (provider openai, gemini or local, with its baseUrl); "
            "Bedrock embeds with the deployment's model (bunko:embeddingModelId) only"
        )
    # Checked again where the name points now: link-local never, private per settings.
    base_url = configs.endpoint(config) or PUBLIC_EMBEDDINGS.get(config.provider)
    if base_url is None:
        raise ValidationError(f"model config {config.name!r} needs a baseUrl (…/v1)")
    return OpenAIEmbedder(
        base_url=base_url,
        model=config.model_id,
        api_key=configs.key_of(config),
        batch_size=settings.embed_batch_size,
        input_types=settings.openai_input_types,
        # and at every request: the embedder lives as long as the generation, its name's
        # address may change meanwhile
        guard=lambda url: check_model_endpoint(
            url, allow_private=configs.allow_private_endpoints, resolver=configs.resolver
        ),
    )


def open_config_embedder(
    settings: Settings, configs: ModelConfigService, workspace_id: str, config_id: str
) -> ConfigEmbedder:
    """The embedder of a generation of a model config (either shape): built from the config as it
    is, and again whenever the config changes."""
    return ConfigEmbedder(
        configs,
        workspace_id,
        config_id,
        build=lambda config: config_embedder(settings, configs, config),
    )


class LocalGenerationOpener:
    """Opens a config's generation: its embedder, and an index of its own under the data folder.
    The indexes it opens are closed by `closers`. `configs` only reads: endpoint and key."""

    def __init__(
        self, settings: Settings, configs: ModelConfigService, closers: list[Callable[[], None]]
    ) -> None:
        self.settings = settings
        self.configs = configs
        self.closers = closers

    def __call__(self, workspace_id: str, config_id: str) -> EmbeddingGeneration:
        from bunko.adapters.local.engine import GenerationIndex

        embedder = open_config_embedder(self.settings, self.configs, workspace_id, config_id)
        folder = self.settings.index_dir / "workspaces" / _safe(workspace_id) / _safe(config_id)
        index = GenerationIndex(folder)  # its dimension: the first vectors' (a probe's)
        self.closers.append(index.close)
        return EmbeddingGeneration(config_id, embedder, index)
