"""Scratch services: the whole local graph (as `bunko serve` builds it) over a temporary data
folder that is removed afterwards, for measuring without touching a real library (`bunko
eval`, the ingest and refinement benchmarks). Its queue collects ingest jobs so the caller
indexes them in large batches itself; with `worker=True` the worker thread indexes files as
they arrive, as `bunko serve` does. No per-user upload rate or quota applies."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bunko.adapters.collecting_queue import CollectingQueue
from bunko.bootstrap.root import Services, build_services
from bunko.config import Settings


@contextmanager
def scratch_services(
    *, worker: bool = False, **overrides: Any
) -> Iterator[tuple[Services, CollectingQueue | None]]:
    """Services over a fresh temporary data folder (removed afterwards), with `overrides`
    applied to the settings, and the queue whose jobs the caller processes; `worker`: the
    jobs go to the worker thread `bunko serve` runs instead (and the queue is None)."""
    with tempfile.TemporaryDirectory(prefix="bunko-scratch-") as tmp:
        queue = None if worker else CollectingQueue()
        # The operator measuring on a throw-away folder: no users to protect from a bulk load
        # (the per-user upload rate stopped `bunko eval` at its 61st document).
        unlimited = {"upload_rate_per_minute": 0, "upload_quota_bytes": 0}
        services = build_services(
            Settings(data_dir=Path(tmp), **{**unlimited, **overrides}), queue=queue
        )
        try:
            yield services, queue
        finally:
            services.close()
