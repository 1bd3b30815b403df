"""Embedding models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Text → L2-normalised float32 vectors. Batches internally."""

    name: str
    dimension: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dimension)."""

    def embed_query(self, text: str) -> np.ndarray:
        """Shape (dimension,)."""


@runtime_checkable
class TrainableEmbedder(Embedder, Protocol):
    """An embedder fitted on the corpus itself (LSA); `lsa_retrain` calls `fit`."""

    @property
    def is_fitted(self) -> bool: ...
    def fit(self, texts: Sequence[str]) -> None: ...


@runtime_checkable
class LoadsLazily(Protocol):
    """An embedder whose model loads on first use (seconds); `warm_up` loads it now."""

    def warm_up(self) -> None: ...


@runtime_checkable
class FollowsConfig(Protocol):
    """An embedder built from a model config; `refresh` makes it read the config again at
    its next use (the config changed: a new API key)."""

    def refresh(self) -> None: ...
