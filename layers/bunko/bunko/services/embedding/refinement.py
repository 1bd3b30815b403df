"""Progressive quality: a file is searchable with the server's fast model at once, and a
stronger model (BUNKO_REFINE_EMBEDDER, e5) re-embeds the same chunks in the background into
its own index generation. A workspace's searches move to that generation whenever it holds
every chunk of the workspace, and back to the fast one from the moment a write changes the
workspace until the refiner has caught up: new files never wait for the slow model, and
search has the stronger model's quality whenever the machine has had time for it.

Writes reach the refined generation as a follower (ports/embedding_generations.py): entries
without vectors, which take those chunks out there (`FollowerIndex`). The refiner compares
the generation's chunk ids with metadata's and embeds what is missing a small batch at a
time, only while no file waits in the ingest queue and no write came for `quiet_seconds`, in
a thread of lower priority. Each batch is checked against metadata before it is written (a
chunk edited or deleted meanwhile is dropped), and a workspace turns ready only after a
whole pass during which nothing was written to it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from bunko.domain import Chunk
from bunko.ports import (
    DEFAULT_MODEL,
    EmbeddingGeneration,
    GenerationOpener,
    IndexEntry,
    MetadataStore,
    SearchIndex,
    SettingsStore,
)
from bunko.services.embedding.embedding_generations import ChosenGenerations
from bunko.services.embedding.index_entries import batched, entries_for
from bunko.services.embedding.model_status import RefinedStatus
from bunko.services.embedding.reindex import embed_texts

log = logging.getLogger(__name__)

NICENESS = 10  # the refiner thread's: the foreground (searches, new files) comes first


class FollowerIndex:
    """The refined generation's index as the write path sees it (a "follower": see
    EmbeddingGenerations.followers). A write arrives without vectors of the refined model, so
    indexing a chunk here takes it out of the refined index instead (the refiner embeds it
    again with its own model later); a delete deletes. `touched(workspace)` hears of every
    change first, so the workspace is answered by the fast generation until the refiner has
    caught up. Searches never come here (`RefiningGenerations.serving`)."""

    def __init__(self, inner: SearchIndex, touched: Callable[[str], None]) -> None:
        self.inner = inner
        self.touched = touched
        self.dimension = inner.dimension

    def index(self, entries: Sequence[IndexEntry]) -> None:
        by_workspace: dict[str, list[str]] = {}
        for entry in entries:
            by_workspace.setdefault(entry.workspace_id, []).append(entry.chunk_id)
        for workspace_id, chunk_ids in by_workspace.items():
            self.delete_chunks(workspace_id, chunk_ids)

    def delete_document(self, workspace_id: str, document_id: str) -> None:
        self.touched(workspace_id)
        self.inner.delete_document(workspace_id, document_id)

    def delete_chunks(self, workspace_id: str, chunk_ids: Sequence[str]) -> None:
        self.touched(workspace_id)
        self.inner.delete_chunks(workspace_id, chunk_ids)

    def clear(self, workspace_id: str | None = None) -> None:
        if workspace_id is not None:
            self.touched(workspace_id)
        self.inner.clear(workspace_id)

    def count(self, workspace_id: str | None = None) -> int:
        return self.inner.count(workspace_id)

    def __getattr__(self, name: str) -> Any:  # the searches, should anything ask
        return getattr(self.inner, name)


class RefiningGenerations(ChosenGenerations):
    """ChosenGenerations whose default-model workspaces are answered by `refined` whenever its
    generation is complete for them."""

    def __init__(
        self,
        default: EmbeddingGeneration,
        store: SettingsStore,
        opener: GenerationOpener,
        refined: EmbeddingGeneration,
    ) -> None:
        super().__init__(default, store, opener)
        self.refined = refined
        follower = FollowerIndex(refined.index, self.touch)
        self.follower = EmbeddingGeneration(f"refined:{refined.model}", None, follower)
        self.wake = threading.Event()
        self.listeners: list[Callable[[], None]] = []  # told of each write (the refine job)
        self.last_write = 0.0  # time.monotonic() of the last write to any workspace
        self._ready: set[str] = set()
        self._writes: dict[str, int] = {}  # per workspace: writes since the start
        self._dirty: set[str] = set()  # workspaces the refiner has to look at

    def serving(self, workspace_id: str) -> EmbeddingGeneration:
        chosen = self.chosen(workspace_id)
        if chosen.model == DEFAULT_MODEL and workspace_id in self._ready:
            return self.refined
        return chosen

    def followers(self, workspace_id: str) -> list[EmbeddingGeneration]:
        # Always, even for a workspace on a model config of its own: should it come back
        # to the default model, its refined generation has missed nothing.
        return [self.follower]

    def touch(self, workspace_id: str) -> None:
        """A write to the workspace: the fast generation answers until the refiner is back."""
        with self._lock:
            self._ready.discard(workspace_id)
            self._writes[workspace_id] = self._writes.get(workspace_id, 0) + 1
            self._dirty.add(workspace_id)
            self.last_write = time.monotonic()
        self._wake()

    def _wake(self) -> None:
        self.wake.set()
        for listener in self.listeners:
            listener()

    def writes(self, workspace_id: str) -> int:
        return self._writes.get(workspace_id, 0)

    def is_ready(self, workspace_id: str) -> bool:
        return workspace_id in self._ready

    def set_ready(self, workspace_id: str) -> None:
        with self._lock:
            self._ready.add(workspace_id)

    def look_at(self, workspace_ids: set[str]) -> None:
        with self._lock:
            self._dirty |= workspace_ids
        self._wake()

    def next_dirty(self) -> str | None:
        with self._lock:
            return self._dirty.pop() if self._dirty else None


class Refiner:
    """The background pass that fills the refined generation (see the module's text)."""

    def __init__(
        self,
        *,
        metadata: MetadataStore,
        generations: RefiningGenerations,
        busy: Callable[[], bool] = lambda: False,
        quiet_seconds: float = 2.0,
        batch_size: int = 8,
    ) -> None:
        self.metadata = metadata
        self.generations = generations
        self.busy = busy  # files wait in the ingest queue
        self.quiet_seconds = quiet_seconds
        self.batch_size = batch_size  # small: a batch holds the model for ~2 s on 2 cores
        self.embedded: dict[str, int] = {}  # per workspace: chunks embedded since the start
        self._stop = threading.Event()
        self._halt: threading.Event | None = None  # the scheduler's stop, during a pass
        self._own: Any = None  # a scheduler of its own (start())
        self._looked = False

    @property
    def name(self) -> str | None:
        embedder = self.generations.refined.embedder
        return embedder.name if embedder else None

    def schedule(self, scheduler: Any) -> None:
        """The refine pass as a job of the embedded server's scheduler (bootstrap/scheduler.py):
        due at once (a first look at every workspace), again after each write, and each
        minute should a wake be missed."""
        scheduler.add("refine", self.run_pending, every=60.0)
        self.generations.listeners.append(lambda: scheduler.wake("refine"))

    def start(self) -> None:
        """The refine pass on a scheduler of its own (when no server's scheduler runs it)."""
        from bunko.scheduler import Scheduler

        self._own = Scheduler()
        self.schedule(self._own)
        self._own.start()

    def stop(self) -> None:
        self._stop.set()
        self.generations.wake.set()
        if self._own is not None:
            self._own.stop(timeout=60)

    def status(self, workspace_id: str) -> RefinedStatus:
        return RefinedStatus(
            name=self.name,
            chunks_refined=self.generations.refined.index.count(workspace_id),
            chunks_total=self.metadata.count_chunks(workspace_id),
            serving=self.generations.is_ready(workspace_id),
        )

    def run_pending(self, stop: threading.Event | None = None) -> None:
        """One refine pass: every workspace written to since the last (every workspace, the
        first time), until none is left or `stop` (or `stop()`) says to end."""
        # Linux: a thread id names one thread, so this lowers only the pass's thread (and
        # the model's OpenMP threads, which it starts).
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
        self._halt = stop
        if not self._looked:
            self._looked = True
            self.generations.look_at({d.workspace_id for d in self.metadata.iter_documents()})
        while not self._stopping():
            self.generations.wake.clear()
            workspace_id = self.generations.next_dirty()
            if workspace_id is None:
                return
            try:
                self.refine(workspace_id)
            except Exception:  # looked at again after its next write, or at the next start
                log.exception("refining workspace %s failed", workspace_id)

    def _stopping(self) -> bool:
        return self._stop.is_set() or (self._halt is not None and self._halt.is_set())

    def refine(self, workspace_id: str) -> bool:
        """Bring the workspace's refined generation up to metadata; True when it is complete
        and serves the workspace's searches."""
        generations, index = self.generations, self.generations.refined.index
        with generations.steady():
            if generations.chosen(workspace_id).model != DEFAULT_MODEL:
                return False  # served by its own model config
            seen = generations.writes(workspace_id)
            held = index.chunk_ids(workspace_id)  # type: ignore[attr-defined]
        wanted: set[str] = set()
        for batch in batched(self.metadata.iter_chunks(workspace_id), self.batch_size):
            wanted.update(c.id for c in batch)
            missing = [c for c in batch if c.id not in held]
            if missing and not self._embed(workspace_id, missing):
                return False  # stopping
        with generations.steady():
            if generations.writes(workspace_id) != seen:
                return False  # written meanwhile: looked at again
            if extra := sorted(held - wanted):
                index.delete_chunks(workspace_id, extra)
            held_now, chunks = index.count(workspace_id), self.metadata.count_chunks(workspace_id)
            if held_now != chunks:
                log.warning(
                    "workspace %s: refined generation holds %d entries for %d chunks",
                    workspace_id,
                    held_now,
                    chunks,
                )
                return False
            generations.set_ready(workspace_id)
        log.info("workspace %s: searches now use %s", workspace_id, self.name)
        return True

    def _embed(self, workspace_id: str, chunks: list[Chunk]) -> bool:
        """Embed `chunks` once the machine is quiet and write those still current."""
        if not self._wait_quiet():
            return False
        vectors = embed_texts(
            self.generations.refined.embedder, [c.content for c in chunks], self.batch_size
        )
        with self.generations.steady():  # no write between the check and ours
            current = {
                c.id: c
                for c in self.metadata.get_chunks_by_ids(workspace_id, [c.id for c in chunks])
            }
            documents: dict[str, Any] = {}
            entries: list[IndexEntry] = []
            for i, chunk in enumerate(chunks):
                now = current.get(chunk.id)
                if now is None or now.content != chunk.content:
                    continue  # edited or deleted while it was embedded
                if now.document_id not in documents:
                    documents[now.document_id] = self.metadata.get_document(
                        workspace_id, now.document_id
                    )
                document = documents[now.document_id]
                if document is not None:
                    vector = None if vectors is None else vectors[i : i + 1]
                    entries += entries_for(document, [now], vector)
            self.generations.refined.index.index(entries)
        self.embedded[workspace_id] = self.embedded.get(workspace_id, 0) + len(entries)
        return True

    def _wait_quiet(self) -> bool:
        """Wait until no file waits and no write came for `quiet_seconds`; False: stopping."""
        while not self._stopping():
            quiet = time.monotonic() - self.generations.last_write >= self.quiet_seconds
            if quiet and not self.busy():
                return True
            self._stop.wait(0.25)
        return False
