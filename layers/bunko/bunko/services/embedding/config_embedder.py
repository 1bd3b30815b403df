"""ConfigEmbedder: the embedder of a workspace's model config, kept as long as its generation and
rebuilt when the config changes.

A generation is opened once per process and kept, but its embedder follows the config: a new API
key saved through another process (another Lambda, the CLI beside `bunko serve`) is used
within `recheck_seconds` (RECHECK_SECONDS by default), one saved through this process at once
(`refresh`, called by the generations when the config is saved). The embedder itself is built by
the factory the composition root gives (an OpenAI-compatible client), so this wing imports
no adapter.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bunko.domain.accounts import ModelConfig
from bunko.ports import Embedder

if TYPE_CHECKING:
    import numpy as np

    from bunko.services.embedding.model_configs import ModelConfigService

log = logging.getLogger(__name__)

# How long a process may go on with a config's old API key after another process saved a
# new one: the config is read again (one store read) at most this often.
RECHECK_SECONDS = 60.0


class ConfigEmbedder:
    """The embedder of a workspace's model config, rebuilt when the config changes. In use,
    a config can change only its key (its model fields answer 409), so the index it fills
    stays valid; the config's `updated_at` tells a change."""

    def __init__(
        self,
        configs: ModelConfigService,
        workspace_id: str,
        config_id: str,
        *,
        build: Callable[[ModelConfig], Embedder],
        recheck_seconds: float = RECHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`build`: the embedder of a config as it is now (the first one built here: a
        config it refuses is refused before the generation opens)."""
        self._build = build
        self._read = lambda: configs.get(workspace_id, config_id)
        self._where = f"model config {config_id} of workspace {workspace_id}"
        self.recheck_seconds = recheck_seconds
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

    def _current(self) -> Embedder:
        with self._lock:
            now = self._clock()
            if now - self._checked < self.recheck_seconds:
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
