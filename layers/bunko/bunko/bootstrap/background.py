"""What the embedded server runs beside its app: resume unfinished ingest, rebuild a new
index generation, and watch the drop folder and the folders saved in /settings."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from bunko.bootstrap.root import Services
from bunko.domain import DEFAULT_WORKSPACE_ID, DocumentStatus
from bunko.ports import IngestJob

log = logging.getLogger(__name__)


def requeue_unfinished(services: Services) -> int:
    """Queue documents a previous run left pending or indexing (the local queue is in memory)."""
    count = 0
    for doc in services.metadata.iter_documents():
        if doc.status in (DocumentStatus.PENDING, DocumentStatus.INDEXING):
            services.queue.enqueue(IngestJob(doc.workspace_id, doc.id, doc.revision))
            count += 1
    return count


def index_needs_rebuild(services: Services) -> bool:
    """True when metadata has chunks but this index generation has none (a new model)."""
    return services.index.count() == 0 and services.metadata.count_chunks() > 0


def start_background_work(services: Services, *, watch: bool) -> Callable[[], None]:
    """Resume unfinished ingest, rebuild a new index generation, watch the drop folder.
    Returns a function that stops what it started."""
    from bunko.drops.folder_monitor import FolderMonitor
    from bunko.drops.folder_watcher import DropFolderWatcher, WatchedFolder

    requeued = requeue_unfinished(services)
    if requeued:
        log.info("re-queued %d unfinished documents", requeued)
    if index_needs_rebuild(services):
        log.info("index generation is empty: rebuilding it from metadata in the background")
        threading.Thread(
            target=services.pipeline.reindex, name="bunko-reindex", daemon=True
        ).start()
    watcher: FolderMonitor | DropFolderWatcher | None = None
    if services.accounts is not None:
        # The drop folder plus the folders saved through /settings, reloaded when they change.
        watcher = FolderMonitor(
            services.ingest,
            services.accounts.workspace_settings,
            drop_dir=services.settings.drop_dir if watch else None,
            drop_workspace_id=DEFAULT_WORKSPACE_ID,
        )
        watcher.start()
    elif watch:
        watcher = DropFolderWatcher(
            services.ingest, DEFAULT_WORKSPACE_ID, [WatchedFolder(services.settings.drop_dir)]
        )
        watcher.start()
    if watch:
        log.info("watching %s", services.settings.drop_dir)

    def stop() -> None:
        if watcher:
            watcher.stop()
        services.close()

    return stop
