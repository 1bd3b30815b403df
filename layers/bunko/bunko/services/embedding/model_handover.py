"""The moment a workspace's new model takes over: shared by the thread that rebuilds on one
machine (ModelSwitch) and the queued steps that rebuild on AWS (BuildSteps)."""

from __future__ import annotations

import logging

from bunko.ports import EmbeddingGeneration, MetadataStore
from bunko.ports.embedding_generations import DEFAULT_MODEL
from bunko.ports.index import OwnIndex
from bunko.services.embedding.embedding_generations import ChosenGenerations

log = logging.getLogger(__name__)


class BuildSuperseded(Exception):
    """The workspace's choice of model changed while a model was being built for it (another
    model chosen, or the change cancelled): the build stops, its generation is not switched
    to, and the newer choice's own build carries on. Raised by `hand_over` and the build
    loops (ModelSwitch, BuildSteps), which catch it and end quietly."""


def hand_over(
    generations: ChosenGenerations,
    metadata: MetadataStore,
    workspace_id: str,
    target: str,
    generation: EmbeddingGeneration,
    *,
    last: bool,
) -> EmbeddingGeneration | None:
    """Switch to `generation` if its entries match metadata (or on the `last` attempt: a write
    raced the rebuild); returns the generation it replaced, or None to rebuild again. Inside
    `steady`, so no write comes between the count and the switch."""
    with generations.steady():
        if generations.state(workspace_id)["building"] != target:
            raise BuildSuperseded
        if not last:  # the last attempt switches anyway: no counting (AWS: two queries)
            held = generation.index.count(workspace_id)
            chunks = metadata.count_chunks(workspace_id)
            if held != chunks:
                log.warning("workspace %s: %d entries for %d chunks", workspace_id, held, chunks)
                return None
        old = generations.chosen(workspace_id)
        generations.save_state(workspace_id, {"serving": target, "building": None})
        return old


def retire(generations: ChosenGenerations, workspace_id: str, old: EmbeddingGeneration) -> None:
    """After `workspace_id` switched away from `old` (its entries cleared): delete `old`'s
    index when it is a model's own and no workspace serves or builds with that model any
    more, so per-model indexes do not pile up in the collection (issue 47, point 9)."""
    if old.model == DEFAULT_MODEL or not isinstance(old.index, OwnIndex):
        return
    with generations.steady():
        if any(old.model in (s["serving"], s["building"]) for _, s in generations.all_states()):
            return
        old.index.drop_index()
        generations.forget(workspace_id, old.model)  # chosen again, it is opened (and made) anew
    log.info("model %s: its index was deleted (no workspace uses it)", old.model)
