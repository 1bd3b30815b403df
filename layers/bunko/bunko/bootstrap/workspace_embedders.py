"""The routes of model configs: an embedding model config (`/model-configs`, type embedding)
turned into an OpenAI-compatible embedder and its own index generation when the workspace
first uses it (as bootstrap/models.py does for chat models: the API key is decrypted only
then). The embedded shape's generation is `index/workspaces/<workspace>/<config>/`; the AWS
shape's an OpenSearch index of the config's (bootstrap/aws_routes.py).

A route is opened once per process and kept, but its embedder follows the config
(`ConfigEmbedder`): a new API key saved through another process (another Lambda, the CLI
beside `bunko serve`) is used within RECHECK_SECONDS, one saved through this process at once.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bunko.config import Settings
from bunko.domain.accounts import ModelConfig
from bunko.errors import ValidationError
from bunko.ports import EmbeddingRoute
from bunko.services.embedding import ModelConfigService, check_model_endpoint

if TYPE_CHECKING:
    import numpy as np

    from bunko.adapters.openai_embedder import OpenAIEmbedder

log = logging.getLogger(__name__)

# How long a process may go on with a config's old API key after another process saved a
# new one: the config is read again (one store read) at most this often.
RECHECK_SECONDS = 60.0

# A provider without a baseUrl in its config uses its public OpenAI-compatible endpoint.
PUBLIC_EMBEDDINGS = {
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/openai/",
}
# Said by a deployment built without model routes (one model for every workspace).
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
        # and at every request: the embedder lives as long as the route, its name's
        # address may change meanwhile
        guard=lambda url: check_model_endpoint(
            url, allow_private=configs.allow_private_endpoints, resolver=configs.resolver
        ),
    )


class ConfigEmbedder:
    """The embedder of a workspace's model config, rebuilt when the config changes. In use,
    a config can change only its key (its model fields answer 409), so the index it fills
    stays valid; the config's `updated_at` tells a change."""

    def __init__(
        self,
        settings: Settings,
        configs: ModelConfigService,
        workspace_id: str,
        config_id: str,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._build = lambda config: config_embedder(settings, configs, config)
        self._read = lambda: configs.get(workspace_id, config_id)
        self._where = f"model config {config_id} of workspace {workspace_id}"
        self._clock = clock
        self._lock = threading.Lock()
        config = self._read()
        self._inner, self._seen = self._build(config), config.updated_at
        self._checked = clock()

    @property
    def name(self) -> str:
        return self._current().name

    @property
    def dimension(self) -> int:
        return self._current().dimension

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._current().embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._current().embed_query(text)

    def refresh(self) -> None:
        """The config was saved through this process: read it again at the next use."""
        with self._lock:
            self._checked = -math.inf

    def _current(self) -> OpenAIEmbedder:
        with self._lock:
            now = self._clock()
            if now - self._checked < RECHECK_SECONDS:
                return self._inner
            self._checked = now
            try:
                config = self._read()
                if config.updated_at != self._seen:
                    self._inner, self._seen = self._build(config), config.updated_at
                    log.info("%s changed: embedding with its new settings", self._where)
            except Exception:  # a store hiccup must not fail the search; next time again
                log.warning(
                    "could not read %s again; using it as it was", self._where, exc_info=True
                )
            return self._inner


class LocalRouteOpener:
    """Opens a config's route: its embedder, and an index of its own under the data folder.
    The indexes it opens are closed by `closers`. `configs` only reads: endpoint and key."""

    def __init__(
        self, settings: Settings, configs: ModelConfigService, closers: list[Callable[[], None]]
    ) -> None:
        self.settings = settings
        self.configs = configs
        self.closers = closers

    def __call__(self, workspace_id: str, config_id: str) -> EmbeddingRoute:
        from bunko.adapters.local.engine import GenerationIndex

        embedder = ConfigEmbedder(self.settings, self.configs, workspace_id, config_id)
        folder = self.settings.index_dir / "workspaces" / _safe(workspace_id) / _safe(config_id)
        index = GenerationIndex(folder)  # its dimension: the first vectors' (a probe's)
        self.closers.append(index.close)
        return EmbeddingRoute(config_id, embedder, index)
