"""Vectors a model already gave some texts elsewhere (an archive's, `bunko import`): the
pipeline takes them instead of embedding those texts again, and embeds only the others."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from bunko.ports.embedding import Embedder, TrainableEmbedder
from bunko.services.embedding import embed_texts

# What the vectors held in memory may take (float32); past it, the rest is embedded.
MAX_KNOWN_BYTES = 256 << 20


class KnownVectors:
    """Vectors of `model` (an embedder's name) by their text's SHA-256."""

    def __init__(self, model: str, dimension: int) -> None:
        self.model, self.dimension = model, dimension
        self._vectors: dict[bytes, np.ndarray] = {}
        self.reused = 0  # texts whose vector was taken, not embedded
        self.embedded = 0

    def __len__(self) -> int:
        return len(self._vectors)

    def add(self, text: str, vector: Sequence[float]) -> bool:
        """Keep `vector` for `text`; False (not kept) when it has another dimension or the
        memory allowed is full."""
        if len(vector) != self.dimension:
            return False
        if (len(self._vectors) + 1) * self.dimension * 4 > MAX_KNOWN_BYTES:
            return False
        self._vectors[_digest(text)] = np.asarray(vector, dtype=np.float32)
        return True

    def serves(self, embedder: Embedder | None) -> bool:
        """Whether these vectors are what `embedder` would give (the same model and size; a
        model fitted on each library's own text, LSA, never)."""
        return (
            embedder is not None
            and not isinstance(embedder, TrainableEmbedder)
            and embedder.name == self.model
            and embedder.dimension == self.dimension
        )

    def embed(
        self, embedder: Embedder | None, texts: list[str], batch_size: int
    ) -> np.ndarray | None:
        """`texts`' vectors: the known ones taken, the rest embedded by `embedder`."""
        if not texts or not self.serves(embedder):
            return embed_texts(embedder, texts, batch_size)
        found = [self._vectors.get(_digest(t)) for t in texts]
        missing = [i for i, v in enumerate(found) if v is None]
        if missing:
            fresh = embed_texts(embedder, [texts[i] for i in missing], batch_size)
            if fresh is None:
                return None
            for i, vector in zip(missing, fresh, strict=True):
                found[i] = vector
        self.reused += len(texts) - len(missing)
        self.embedded += len(missing)
        return np.vstack(found).astype(np.float32, copy=False)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
