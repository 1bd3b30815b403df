"""The embedded shape's routes of model configs: an embedding model config (`/model-configs`,
type embedding) turned into an OpenAI-compatible embedder and its own index generation,
`index/workspaces/<workspace>/<config>/`, when the workspace first uses it (as
bootstrap/models.py does for chat models: the API key is decrypted only then).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bunko.config import Settings
from bunko.errors import ValidationError
from bunko.ports import EmbeddingRoute, RouteOpener
from bunko.services.model_configs import ModelConfigService

# A provider without a baseUrl in its config uses its public OpenAI-compatible endpoint.
PUBLIC_EMBEDDINGS = {
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/openai/",
}
# Said by a deployment whose index cannot hold one model per workspace (AWS).
AWS_REFUSAL = (
    "a workspace's own embedding model is not available on the AWS deployment yet: one "
    "OpenSearch index serves every workspace with the deployment's embedding model "
    "(bunko:embeddingProvider); omit selectedEmbeddingId or set it to null"
)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def local_route_opener(
    settings: Settings, configs: ModelConfigService, closers: list[Callable[[], None]]
) -> RouteOpener:
    """Opens a config's route; the indexes it opens are closed by `closers`."""

    def open_route(workspace_id: str, config_id: str) -> EmbeddingRoute:
        from bunko.adapters.local.index_generations import GenerationIndex
        from bunko.adapters.openai_embedder import OpenAIEmbedder

        config = configs.get(workspace_id, config_id)
        if config.type != "embedding":
            raise ValidationError(f"model config {config_id} is a {config.type} model")
        if config.provider == "bedrock":
            raise ValidationError(
                f"model config {config.name!r}: Bedrock embeddings serve the AWS deployment "
                "only; here a workspace's model is an OpenAI-compatible endpoint (provider "
                "openai, gemini or local, with its baseUrl)"
            )
        # Checked again where the name points now: link-local never, private per settings.
        base_url = configs.endpoint(config) or PUBLIC_EMBEDDINGS.get(config.provider)
        if base_url is None:
            raise ValidationError(f"model config {config.name!r} needs a baseUrl (…/v1)")
        embedder = OpenAIEmbedder(
            base_url=base_url,
            model=config.model_id,
            api_key=configs.api_key(workspace_id, config_id),
            batch_size=settings.embed_batch_size,
            input_types=settings.openai_input_types,
        )
        folder = settings.index_dir / "workspaces" / _safe(workspace_id) / _safe(config_id)
        index = GenerationIndex(folder)  # its dimension: the first vectors' (a probe's)
        closers.append(index.close)
        return EmbeddingRoute(config_id, embedder, index)

    return open_route
