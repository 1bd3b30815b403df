"""BuildSteps: a change of a workspace's embedding model built in steps, where no process
outlives a request (AWS). Choosing the model sends the first step to the ingest queue; the
ingest function runs each step until its time is nearly up, then sends the next, which starts
after the last document it finished (documents in id order, so one added or deleted meanwhile
shifts nothing: writes reach the model being built anyway). The last step switches.

How far it is lives in the settings store (scope "embedding-model-build"), where any function
answering `GET /embedding-model` reads it. A step that fails records its error and raises, so
the queue retries it and then dead-letters it; choosing the model again starts over. A step
delivered twice runs twice (the work is done again and written once: writes replace), and
only the first delivery of the first step empties the model's index.

Unlike the embedded shape, the switch does not compare the index's entry count with
metadata: OpenSearch Serverless counts new entries only after its next refresh (about a
minute), so the count would disagree after every rebuild. What the count guarded against is
closed another way. A function writes a document to the indexes it reads from the saved choice
just before writing (the embedded shape holds a lock across both; functions cannot), so a
write that read the choice before the build began, or whose entries the first step's clearing
removed, may reach only the old index while the steps list the document before its metadata is
saved. Such a write is saved around the build's start; the last step writes every document
saved within `race_seconds` (the setting BUNKO_MODEL_BUILD_RACE_SECONDS, 120 by default) of
the start or of the clearing again, then switches.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from bunko.domain import Chunk, Document, DocumentStatus
from bunko.ports import EmbeddingGeneration, MetadataStore, SettingsStore
from bunko.ports.index import OwnIndex
from bunko.services.embedding.embedding_generations import ChosenGenerations
from bunko.services.embedding.index_entries import entries_for
from bunko.services.embedding.model_handover import BuildSuperseded, hand_over, retire
from bunko.services.embedding.reindex import embed_texts

log = logging.getLogger(__name__)

SCOPE = "embedding-model-build"
MARGIN_SECONDS = 120.0  # left to a step for its last group of documents and the next message
STALE_SECONDS = 30 * 60  # a step silent this long died (the ingest function runs ≤ 10 min)
# (workspace id, model config id, the last document done or None) -> queues that step
SendStep = Callable[[str, str, str | None], None]
TimeLeft = Callable[[], float]  # seconds left to this invocation


class BuildSteps:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        generations: ChosenGenerations,
        store: SettingsStore,
        send: SendStep,
        batch_size: int = 64,
        race_seconds: float,
    ) -> None:
        """`race_seconds`: how close to the build's start or clearing a write that may have
        missed the model's index is saved (its default is the setting's)."""
        self.metadata = metadata
        self.generations = generations
        self.store = store
        self.send = send
        self.batch_size = batch_size
        self.race_seconds = race_seconds

    # What the api function reads and starts.
    def figures(self, workspace_id: str) -> dict[str, Any]:
        return self.store.get_settings(SCOPE, workspace_id) or {}

    def running(self, workspace_id: str) -> bool:
        """A step is queued or running and has not failed or gone silent."""
        figures = self.figures(workspace_id)
        fresh = time.time() - float(figures.get("at", 0)) < STALE_SECONDS
        return bool(figures) and figures.get("error") is None and fresh

    def dispatch(self, workspace_id: str, target: str) -> None:
        """Queue the first step of building `target` (saved as being built by the caller)."""
        total = self.metadata.count_chunks(workspace_id)
        figures = {"model": target, "done": 0, "total": total, "error": None, "begun": time.time()}
        self._save(workspace_id, figures)
        self.send(workspace_id, target, None)

    # What the ingest function runs.
    def step(self, workspace_id: str, target: str, after: str | None, time_left: TimeLeft) -> None:
        """Index the workspace's documents after `after` into `target`'s index until
        `time_left()` falls under the margin (then queue the next step), or switch."""
        generations = self.generations
        if generations.state(workspace_id)["building"] != target:
            log.info("workspace %s: step for %s superseded", workspace_id, target)
            return
        generation = generations.generation(workspace_id, target)
        saved = self.figures(workspace_id)
        figures = {
            "model": target,
            "done": saved.get("done", 0) if after is not None else 0,
            "total": self.metadata.count_chunks(workspace_id),
            "error": None,
            "begun": saved.get("begun", time.time()),
            "cleared": saved.get("cleared", time.time()),
        }
        try:
            # Emptied once a build: a first step delivered again (the queue delivers at least
            # once) would otherwise erase what the first one's successors wrote.
            if after is None and "cleared" not in saved:
                if isinstance(generation.index, OwnIndex):
                    # A warm function may hold the generation of a model whose index was retired
                    # since: chosen again, it is made again before anything is written.
                    generation.index.ensure_index()
                with generations.steady():
                    generation.index.clear(workspace_id)
                figures["cleared"] = time.time()
                self._save(workspace_id, figures)
            for n, documents in enumerate(self._groups(workspace_id, after)):
                if n and time_left() < MARGIN_SECONDS:  # at least one group a step
                    self.send(workspace_id, target, after)
                    return
                if generations.state(workspace_id)["building"] != target:
                    raise BuildSuperseded
                figures["done"] += self._index(generation, documents)
                after = documents[-1][0].id
                self._save(workspace_id, figures)
            self._index(generation, self._raced(workspace_id, figures))
            old = hand_over(generations, self.metadata, workspace_id, target, generation, last=True)
        except BuildSuperseded:
            log.info("workspace %s: rebuild for %s superseded", workspace_id, target)
            return
        except Exception as exc:
            figures["error"] = str(exc) or type(exc).__name__
            self._save(workspace_id, figures)
            raise
        if old is not None and old.model != target:
            old.index.clear(workspace_id)  # the old generation no longer follows it
            retire(generations, workspace_id, old)
        self.store.delete_settings(SCOPE, workspace_id)
        log.info("workspace %s: now served by model %s", workspace_id, target)

    def _index(
        self, generation: EmbeddingGeneration, documents: list[tuple[Document, list[Chunk]]]
    ) -> int:
        """Embed the documents' chunks with the generation's model into its index; how many."""
        texts = [chunk.content for _, chunks in documents for chunk in chunks]
        if not texts:
            return 0
        vectors = embed_texts(generation.embedder, texts, self.batch_size)
        entries, offset = [], 0
        for doc, chunks in documents:
            part = None if vectors is None else vectors[offset : offset + len(chunks)]
            entries += entries_for(doc, chunks, part)
            offset += len(chunks)
        generation.index.index(entries)  # a chunk written before is replaced, not doubled
        return len(texts)

    def _raced(
        self, workspace_id: str, figures: dict[str, Any]
    ) -> list[tuple[Document, list[Chunk]]]:
        """The indexed documents saved from `race_seconds` before the build began to
        `race_seconds` after its clearing: a write among them may have missed the model's
        index."""
        race = self.race_seconds
        low, high = figures["begun"] - race, figures["cleared"] + race
        metadata = self.metadata
        found = [
            (doc, metadata.get_chunks(workspace_id, doc.id))
            for doc in metadata.iter_documents(workspace_id)
            if doc.status == DocumentStatus.COMPLETED and low <= doc.updated_at.timestamp() <= high
        ]
        log.info(
            "workspace %s: %d documents saved as the build began, written again",
            workspace_id,
            len(found),
        )
        return found

    def _groups(
        self, workspace_id: str, after: str | None
    ) -> Iterator[list[tuple[Document, list[Chunk]]]]:
        """The documents after `after` in id order with their chunks, grouped to about four
        embedding batches of chunks."""
        metadata = self.metadata
        remaining = {
            d.id: d for d in metadata.iter_documents(workspace_id) if after is None or d.id > after
        }
        group: list[tuple[Document, list[Chunk]]] = []
        size = 0
        for doc_id in sorted(remaining):
            chunks = metadata.get_chunks(workspace_id, doc_id)
            group.append((remaining[doc_id], chunks))
            size += len(chunks)
            if size >= self.batch_size * 4:
                yield group
                group, size = [], 0
        if group:
            yield group

    def _save(self, workspace_id: str, figures: dict[str, Any]) -> None:
        self.store.put_settings(SCOPE, workspace_id, {**figures, "at": time.time()})
