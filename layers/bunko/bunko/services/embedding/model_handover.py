"""The moment a workspace's new model takes over: shared by the thread that rebuilds on one
machine (ModelSwitch) and the queued steps that rebuild on AWS (BuildSteps)."""

from __future__ import annotations

import logging

from bunko.ports import EmbeddingRoute, MetadataStore
from bunko.ports.embedding_routes import DEFAULT_MODEL
from bunko.ports.index import OwnIndex
from bunko.services.embedding.embedding_routes import WorkspaceRoutes

log = logging.getLogger(__name__)


class Superseded(Exception):
    """Another model was chosen while this one was being built."""


def hand_over(
    routes: WorkspaceRoutes,
    metadata: MetadataStore,
    workspace_id: str,
    target: str,
    route: EmbeddingRoute,
    *,
    last: bool,
) -> EmbeddingRoute | None:
    """Switch to `route` if its entries match metadata (or on the `last` attempt: a write
    raced the rebuild); returns the route it replaced, or None to rebuild again. Inside
    `steady`, so no write comes between the count and the switch."""
    with routes.steady():
        if routes.state(workspace_id)["building"] != target:
            raise Superseded
        if not last:  # the last attempt switches anyway: no counting (AWS: two queries)
            held = route.index.count(workspace_id)
            chunks = metadata.count_chunks(workspace_id)
            if held != chunks:
                log.warning("workspace %s: %d entries for %d chunks", workspace_id, held, chunks)
                return None
        old = routes.chosen(workspace_id)
        routes.save_state(workspace_id, {"serving": target, "building": None})
        return old


def retire(routes: WorkspaceRoutes, workspace_id: str, old: EmbeddingRoute) -> None:
    """After `workspace_id` switched away from `old` (its entries cleared): delete `old`'s
    index when it is a model's own and no workspace serves or builds with that model any
    more, so per-model indexes do not pile up in the collection (issue 47, point 9)."""
    if old.model == DEFAULT_MODEL or not isinstance(old.index, OwnIndex):
        return
    with routes.steady():
        if any(old.model in (s["serving"], s["building"]) for _, s in routes.all_states()):
            return
        old.index.drop_index()
        routes.forget(workspace_id, old.model)  # chosen again, it is opened (and made) anew
    log.info("model %s: its index was deleted (no workspace uses it)", old.model)
