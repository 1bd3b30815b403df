"""ThreadIngestQueue: the embedded IngestQueue, a worker thread that indexes in batches.

Jobs queued while the worker is busy are taken together, so embeddings are batched across
documents. Jobs live in memory; documents left `pending` by a crash are re-queued at start
(`requeue_pending` in bootstrap), so nothing is lost.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence

from bunko.ports import IngestJob

log = logging.getLogger(__name__)

MAX_BATCH_JOBS = 64


class ThreadIngestQueue:
    def __init__(self, process: Callable[[Sequence[IngestJob]], object]) -> None:
        self._process = process
        self._jobs: queue.Queue[IngestJob | None] = queue.Queue()
        self._idle = threading.Condition()
        self._pending = 0
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        """Jobs queued or being processed."""
        return self._pending

    def enqueue(self, job: IngestJob) -> None:
        with self._idle:
            self._pending += 1
        self._jobs.put(job)
        self._ensure_started()

    def _ensure_started(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="bunko-ingest", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            batch = [job]
            stop = False
            while len(batch) < MAX_BATCH_JOBS:
                try:
                    more = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            try:
                self._process(batch)
            except Exception:  # the pipeline records failures; this is a last guard
                log.exception("ingest batch failed")
            with self._idle:
                self._pending -= len(batch)
                self._idle.notify_all()
            if stop:
                return

    def join(self, timeout: float | None = None) -> bool:
        """Wait until every queued job is processed; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout=timeout)

    def stop(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                self._jobs.put(None)
                self._thread.join(timeout=30)
            self._thread = None
