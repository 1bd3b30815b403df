"""What the embedded server runs beside its app: resume unfinished ingest, rebuild a new
index generation. bunko.embedded_server starts these with the refiner and the watchers of
the drop folder and the folders saved in /settings (the drops door)."""

from __future__ import annotations

import logging
import threading
from typing import Any

from bunko.bootstrap.root import Services
from bunko.ports import IngestJob

log = logging.getLogger(__name__)


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


def resume_ingest(services: Services) -> threading.Thread | None:
    """The startup check: repair the index if it disagrees with metadata, then queue what a
    previous run left unfinished (after the rebuild, so the two never interleave)."""

    def requeue() -> None:
        requeued = requeue_unfinished(services)
        if requeued:
            log.info("startup check: re-queued %d unfinished documents", requeued)

    if not index_needs_rebuild(services, stale=stale_mark(services)):
        resume_model_switches(services)
        requeue()
        return None

    def repair() -> None:
        count = rebuild_index(services)
        log.info("startup check: index rebuilt with %d entries", count)
        resume_model_switches(services)
        requeue()

    thread = threading.Thread(target=repair, name="bunko-reindex", daemon=True)
    thread.start()
    return thread
