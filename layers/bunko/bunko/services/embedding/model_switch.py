"""ModelSwitch: a workspace's embedding model (DESIGN decision 6's full form).

Choosing a model config (type `embedding`) or the server's default rebuilds the workspace's
chunks into that model's index generation in the background and switches when it is
complete. Until then the old generation serves, with the old model embedding the queries;
writes reach both (pipeline, item edits, deletes: `write_targets`), and the switch happens
inside `generations.steady()`, so no write falls between the two. The choice is saved before the
rebuild starts and cleared after the switch: a rebuild killed midway starts again at the
next start (`resume`). A later policy (index with the fast default now, re-embed into a
stronger model, then switch) reuses `begin` as it is. Where no process outlives a request
(AWS), the rebuild runs in steps through the ingest queue instead of a thread
(services/embedding/model_build_steps.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from bunko.errors import ValidationError
from bunko.ports import DEFAULT_MODEL, EmbeddingGeneration, MetadataStore
from bunko.services.embedding.embedding_generations import ChosenGenerations
from bunko.services.embedding.model_build_steps import BuildSteps
from bunko.services.embedding.model_configs import ModelConfigService
from bunko.services.embedding.model_handover import BuildSuperseded, hand_over, retire
from bunko.services.embedding.model_status import BuildProgress, ModelRef, ModelStatus
from bunko.services.embedding.refinement import Refiner
from bunko.services.embedding.reindex import reindex_generation

log = logging.getLogger(__name__)

Start = Callable[[Callable[[], None], str], Any]  # (work, thread name) -> runs it in the background
ATTEMPTS = 3  # rebuilds before a switch whose entry count still disagrees with metadata


def start_thread(work: Callable[[], None], name: str) -> threading.Thread:
    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    return thread


class ModelSwitch:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        configs: ModelConfigService,
        generations: ChosenGenerations | None,
        refusal: str = "",
        default_name: str | None = None,
        batch_size: int = 64,
        start: Start = start_thread,
        refiner: Refiner | None = None,
        steps: BuildSteps | None = None,
    ) -> None:
        """`generations` None: this deployment cannot give a workspace a model of its own, and a
        choice is refused with `refusal` (400). `refiner`: the background refiner, for
        status. `steps`: where no process outlives a request (AWS), rebuilds run as queued
        steps; None: a thread rebuilds."""
        self.metadata = metadata
        self.configs = configs
        self.generations = generations
        self.refusal = refusal
        self.default_name = default_name  # the server's own embedder, for status
        self.batch_size = batch_size
        self.start = start
        self._progress: dict[str, dict[str, Any]] = {}  # workspace → its rebuild's figures
        self.refiner = refiner
        self.steps = steps
        self._lock = threading.Lock()

    def chosen(self, workspace_id: str) -> str | None:
        """The model config the workspace chose (being built or serving), or None: default."""
        if self.generations is None:
            return None
        state = self.generations.state(workspace_id)
        model = state["building"] or state["serving"]
        return None if model == DEFAULT_MODEL else model

    def select(self, workspace_id: str, config_id: str | None) -> ModelStatus:
        """Choose the workspace's embedding model: a model config of type `embedding` in the
        workspace (NotFoundError for another's id), or None for the server's default. The
        rebuild starts in the background; returns the status."""
        if config_id is not None:
            config = self.configs.get(workspace_id, config_id)
            if config.type != "embedding":
                raise ValidationError(
                    f"model config {config_id} is a {config.type} model, not embedding"
                )
        if self.generations is None:
            raise ValidationError(self.refusal)
        target = config_id or DEFAULT_MODEL
        if config_id is not None and config_id not in self.models(workspace_id):
            self._check(workspace_id, config_id)  # a new choice: refused before any write
        with self.generations.steady():
            state = self.generations.state(workspace_id)
            if target == state["serving"]:
                if state["building"] not in (None, target):  # back before the switch
                    self.generations.save_state(workspace_id, {"serving": target, "building": None})
            elif target != state["building"] or not self._running(workspace_id):
                self.begin(workspace_id, target)  # new, or built again after a failure
        return self.status(workspace_id)

    def _check(self, workspace_id: str, config_id: str) -> None:
        """The config's route opens and its endpoint answers (the probe learns the size)."""
        assert self.generations is not None
        # A new choice is opened afresh: probed again, and its index made again if it was
        # retired since a warm process opened it (model_handover.retire).
        self.generations.forget(workspace_id, config_id)
        try:  # opening may probe too (AWS: the new index needs the vectors' size)
            generation = self.generations.generation(workspace_id, config_id)
            dimension = generation.embedder.dimension if generation.embedder else None
        except ValidationError:
            raise  # refused as configured (provider, endpoint's address)
        except Exception as exc:
            self.generations.forget(workspace_id, config_id)
            raise ValidationError(
                f"embedding model config {config_id} could not embed a probe text: {exc}"
            ) from exc
        log.info("workspace %s: model config %s gives %s dims", workspace_id, config_id, dimension)

    def begin(self, workspace_id: str, target: str) -> None:
        """Save `target` as being built and build it in the background."""
        assert self.generations is not None
        serving = self.generations.state(workspace_id)["serving"]
        self.generations.save_state(workspace_id, {"serving": serving, "building": target})
        if self.steps is not None:
            self.steps.dispatch(workspace_id, target)
            return
        with self._lock:
            self._progress[workspace_id] = {"model": target, "done": 0, "total": 0}
            self._progress[workspace_id]["thread"] = self.start(
                lambda: self._build(workspace_id, target), f"bunko-switch-{workspace_id[:8]}"
            )

    def _running(self, workspace_id: str) -> bool:
        if self.steps is not None:
            return self.steps.running(workspace_id)
        thread = self._progress.get(workspace_id, {}).get("thread")
        return bool(thread is not None and getattr(thread, "is_alive", lambda: False)())

    def _build(self, workspace_id: str, target: str) -> None:
        assert self.generations is not None
        figures = self._progress[workspace_id]
        try:
            generation = self.generations.generation(workspace_id, target)
            in_place = self.generations.state(workspace_id)["serving"] == target
            old = None
            for attempt in range(1, ATTEMPTS + 1):
                figures.update(done=0, total=self.metadata.count_chunks(workspace_id))
                self._rebuild(workspace_id, target, generation, in_place=in_place)
                old = self.switch(workspace_id, target, generation, last=attempt == ATTEMPTS)
                if old is not None:
                    break
            if old is not None and old.model != target:
                old.index.clear(workspace_id)  # the old generation no longer follows it
                retire(self.generations, workspace_id, old)
            log.info("workspace %s: now served by model %s", workspace_id, target)
        except BuildSuperseded:
            log.info("workspace %s: rebuild for %s superseded", workspace_id, target)
        except Exception as exc:  # the choice stays saved: the next start tries again
            log.exception("workspace %s: rebuild for model %s failed", workspace_id, target)
            figures["error"] = str(exc) or type(exc).__name__

    def switch(
        self, workspace_id: str, target: str, generation: EmbeddingGeneration, *, last: bool
    ) -> EmbeddingGeneration | None:
        """Hand the workspace over to `generation` (model_handover.hand_over)."""
        assert self.generations is not None
        return hand_over(
            self.generations, self.metadata, workspace_id, target, generation, last=last
        )

    def _rebuild(
        self, workspace_id: str, target: str, generation: EmbeddingGeneration, *, in_place: bool
    ) -> None:
        assert self.generations is not None
        generations, figures = self.generations, self._progress[workspace_id]

        def progress(count: int) -> None:
            if generations.state(workspace_id)["building"] != target:
                raise BuildSuperseded
            figures["done"] += count

        with generations.steady():  # a write in progress is in metadata before the reads below
            generation.index.clear(workspace_id)
        reindex_generation(
            self.metadata,
            generation,
            workspace_id=workspace_id,
            batch_size=self.batch_size,
            progress=progress,
            keywords_first=in_place,
            clear=False,
        )

    def models(self, workspace_id: str) -> set[str]:
        """What the workspace embeds with now: DEFAULT_MODEL or a config id, and the one
        being built."""
        return self.generations.models(workspace_id) if self.generations else {DEFAULT_MODEL}

    def describe(self, workspace_id: str, model: str) -> ModelRef:
        if model == DEFAULT_MODEL:
            return ModelRef(config_id=None, name=self.default_name)
        config = self.configs.store.get_model_config(workspace_id, model)
        return ModelRef(
            config_id=model,
            name=config.name if config else None,
            model_id=config.model_id if config else None,
        )

    def status(self, workspace_id: str) -> ModelStatus:
        """Which model serves the workspace, and how far the one being built is."""
        state = (
            self.generations.state(workspace_id)
            if self.generations
            else {"serving": DEFAULT_MODEL, "building": None}
        )
        building = None
        if state["building"]:
            figures = self._progress.get(workspace_id, {})
            if self.steps is not None:
                figures = self.steps.figures(workspace_id)
            total = figures.get("total") or self.metadata.count_chunks(workspace_id)
            model = self.describe(workspace_id, state["building"])
            building = BuildProgress(
                config_id=model.config_id,
                name=model.name,
                model_id=model.model_id,
                chunks_done=min(figures.get("done", 0), total),
                chunks_total=total,
                error=figures.get("error"),
            )
        refined = None
        if self.refiner is not None and state["serving"] == DEFAULT_MODEL:
            refined = self.refiner.status(workspace_id)
        return ModelStatus(
            serving=self.describe(workspace_id, state["serving"]),
            building=building,
            refined=refined,
        )

    def served_elsewhere(self) -> list[str]:
        """The workspaces not served by the default generation."""
        if self.generations is None:
            return []
        return [ws for ws, s in self.generations.all_states() if s["serving"] != DEFAULT_MODEL]

    def resume(self) -> int:
        """At start: build again what a previous run was building, and rebuild a workspace's
        own generation whose entries disagree with metadata. Returns the rebuilds started."""
        if self.generations is None:
            return 0
        started = 0
        for workspace_id, state in self.generations.all_states():
            target = state["building"]
            if target is None and state["serving"] != DEFAULT_MODEL:
                try:
                    held = self.generations.chosen(workspace_id).index.count(workspace_id)
                except Exception:
                    log.exception("workspace %s: its model cannot be opened", workspace_id)
                    continue
                if held != self.metadata.count_chunks(workspace_id):
                    target = state["serving"]  # rebuilt in place, keywords first
            if target is not None:
                log.warning(
                    "workspace %s: (re)building the index of model %s", workspace_id, target
                )
                self.begin(workspace_id, target)
                started += 1
        return started
