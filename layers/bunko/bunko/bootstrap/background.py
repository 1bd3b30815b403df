"""What the embedded server runs beside its app: resume unfinished ingest, rebuild a new
index generation, and watch the drop folder and the folders saved in /settings."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from bunko.bootstrap.root import Services
from bunko.domain import DEFAULT_WORKSPACE_ID, DocumentStatus
from bunko.ports import IngestJob, LoadsLazily

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
    """True when the index does not hold exactly the chunks metadata holds: a new model's
    empty generation, or a process killed between writing the index and the metadata (or
    in the middle of a rebuild). Metadata is the truth (DESIGN decision 1)."""
    indexed, chunks = services.index.count(), services.metadata.count_chunks()
    if indexed != chunks:
        log.warning(
            "startup check: the search index holds %d entries for %d chunks in metadata;"
            " rebuilding it from metadata",
            indexed,
            chunks,
        )
    return indexed != chunks


def resume_ingest(services: Services) -> threading.Thread | None:
    """The startup check: repair the index if it disagrees with metadata, then queue what a
    previous run left unfinished (after the rebuild, so the two never interleave)."""

    def requeue() -> None:
        requeued = requeue_unfinished(services)
        if requeued:
            log.info("startup check: re-queued %d unfinished documents", requeued)

    if not index_needs_rebuild(services):
        requeue()
        return None

    def repair() -> None:
        count = services.pipeline.reindex()
        log.info("startup check: index rebuilt with %d entries", count)
        requeue()

    thread = threading.Thread(target=repair, name="bunko-reindex", daemon=True)
    thread.start()
    return thread


def start_background_work(services: Services, *, watch: bool) -> Callable[[], None]:
    """Resume unfinished ingest, rebuild a new index generation, watch the drop folder.
    Returns a function that stops what it started."""
    from bunko.drops.folder_monitor import FolderMonitor
    from bunko.drops.folder_watcher import DropFolderWatcher, WatchedFolder

    resume_ingest(services)
    if isinstance(services.embedder, LoadsLazily):
        # Load the model while the server starts, not on the first user's query.
        threading.Thread(
            target=services.embedder.warm_up, name="bunko-warm-up", daemon=True
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
