"""What the embedded server runs beside its app, as jobs of its one scheduler
(bunko/scheduler.py): the startup check (repair the index, resume unfinished ingest and
model switches), the model's warm-up, the refine pass, the sources that are due, the drop
folder's periodic catch-up and the reload of the watched folders when /settings changes them.
bunko.embedded_server builds the scheduler and the watchers (the drops door) and starts both.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from bunko.bootstrap.root import Services
from bunko.ports import IngestJob
from bunko.scheduler import Scheduler

log = logging.getLogger(__name__)

# The live watch sees each change; this catches what it may miss (an overflowed OS queue, a
# folder on a network share). The watcher's own start catches up first.
DROP_CATCH_UP_SECONDS = 3600.0
# How often the sources job looks for due sources at most (a source added by `bunko source
# add`, in another process, is noticed within this).
SOURCES_POLL_SECONDS = 60.0


def schedule_background_work(
    services: Services,
    scheduler: Scheduler,
    *,
    catch_up: Callable[[], None] | None = None,
    reload_folders: Callable[[], None] | None = None,
) -> None:
    """Every job of the embedded server on `scheduler` (started by the caller). `catch_up`
    and `reload_folders`: the drops door's watchers' (drops/folder_monitor.py), when it
    watches folders; the job `watched-folders` runs when woken (a change of /settings)."""
    scheduler.add("startup-check", lambda stop: check_at_startup(services))
    if (warm_up := services.status.model_warm_up) is not None:
        # Load the model while the server starts, not on the first user's query.
        scheduler.add("warm-up", lambda stop: warm_up())
    if services.refiner is not None:
        services.refiner.schedule(scheduler)
    if (sources := services.sources) is not None:
        scheduler.add(
            "sources", lambda stop: sync_due_sources(sources, stop), every=SOURCES_POLL_SECONDS
        )
    if catch_up is not None:
        scheduler.add(
            "drop-catch-up",
            lambda stop: catch_up(),
            every=DROP_CATCH_UP_SECONDS,
            after=DROP_CATCH_UP_SECONDS,
        )
    if reload_folders is not None:
        scheduler.add("watched-folders", lambda stop: reload_folders(), after=None)


def sync_due_sources(sources: Any, stop: threading.Event) -> float:
    """Sync every source that is due (services/sources: one's failure is recorded on it and
    never stops another); the seconds until the next is due (at most SOURCES_POLL_SECONDS)."""
    sources.sync_due(stopping=stop.is_set)
    now = time.time()
    times = [r.next_sync_at for r in sources.due(now + SOURCES_POLL_SECONDS)]
    return min([SOURCES_POLL_SECONDS, *(max(1.0, t - now) for t in times)])


def requeue_unfinished(services: Services) -> int:
    """Queue documents a previous run left pending or indexing (the local queue is in memory)."""
    count = 0
    for doc in services.metadata.iter_documents():
        if not doc.settled:
            services.queue.enqueue(IngestJob(doc.workspace_id, doc.id, doc.revision))
            count += 1
    return count


def index_needs_rebuild(services: Services, *, stale: str | None = None) -> bool:
    """True when the index does not hold exactly the chunks metadata holds: a new model's
    empty generation, or a process killed between writing the index and the metadata (or
    in the middle of a rebuild); or when its generation is `stale` (the mark's token): it
    sat idle while another model's generation followed metadata, or a rebuild of it never
    finished. Metadata is the truth (DESIGN decision 1)."""
    indexed, chunks = services.index.count(), services.metadata.count_chunks()
    # A workspace on a model config of its own lives in that model's generation (its own
    # startup check is ModelSwitch.resume's).
    for workspace_id in _served_elsewhere(services):
        indexed -= services.index.count(workspace_id)
        chunks -= services.metadata.count_chunks(workspace_id)
    if indexed != chunks:
        log.warning(
            "startup check: the search index holds %d entries for %d chunks in metadata;"
            " rebuilding it from metadata",
            indexed,
            chunks,
        )
        return True
    if stale is not None:
        log.warning(
            "startup check: the index of %s may miss changes made while another embedding"
            " model was in use, or its last rebuild did not finish; rebuilding it from metadata",
            services.embedder.name if services.embedder else "keyword-only search",
        )
        return True
    return False


def _served_elsewhere(services: Services) -> list[str]:
    switch = services.model_switch
    return switch.served_elsewhere() if switch else []


def resume_model_switches(services: Services) -> None:
    """Build again the workspace models a previous run was building (after the default
    generation's repair, so the two never write one generation at once)."""
    switch = services.model_switch
    if switch is not None and switch.resume():
        log.info("startup check: resumed the rebuild of workspace embedding models")


def stale_mark(services: Services) -> str | None:
    """The token of the stale mark on the generation in use (embedded shape), or None."""
    if services.settings.backend != "local":
        return None
    from bunko.bootstrap.local import generation_marks

    return generation_marks(services.settings, services.embedder).stale()


def rebuild_index(services: Services, **options: Any) -> int:
    """`pipeline.reindex(**options)`. On the embedded shape the generation is marked stale
    first and the mark taken off after, unless another process marked it again meanwhile
    (that write may have come after the rebuild read metadata): a rebuild killed midway is
    redone at the next start. That lets the rebuild write keywords first, so search finds
    everything by its words while a slow model embeds (a model switch, a kill, a new index)."""
    if services.settings.backend != "local":
        return services.pipeline.reindex(**options)
    from bunko.bootstrap.local import generation_marks

    marks = generation_marks(services.settings, services.embedder)
    token = marks.mark()
    count = services.pipeline.reindex(keywords_first=True, **options)
    marks.settle(token)
    return count


def check_at_startup(services: Services) -> None:
    """The startup check: repair the index if it disagrees with metadata, then queue what a
    previous run left unfinished (after the rebuild, so the two never interleave)."""
    if index_needs_rebuild(services, stale=stale_mark(services)):
        _repair(services)
    else:
        _resume(services)


def _repair(services: Services) -> None:
    count = rebuild_index(services)
    log.info("startup check: index rebuilt with %d entries", count)
    _resume(services)


def _resume(services: Services) -> None:
    resume_model_switches(services)
    requeued = requeue_unfinished(services)
    if requeued:
        log.info("startup check: re-queued %d unfinished documents", requeued)


def resume_ingest(services: Services) -> threading.Thread | None:
    """`check_at_startup` with the repair (if any) in a thread of its own, returned (a
    process without the server's scheduler: tests of the repair)."""
    if not index_needs_rebuild(services, stale=stale_mark(services)):
        _resume(services)
        return None
    thread = threading.Thread(target=_repair, args=(services,), name="bunko-reindex", daemon=True)
    thread.start()
    return thread
