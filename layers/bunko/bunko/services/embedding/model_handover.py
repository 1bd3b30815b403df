"""The moment a workspace's new model takes over: shared by the thread that rebuilds on one
machine (ModelSwitch) and the queued steps that rebuild on AWS (BuildSteps)."""

from __future__ import annotations

import logging

from bunko.ports import EmbeddingRoute, MetadataStore
from bunko.services.embedding.embedding_routes import WorkspaceRoutes

log = logging.getLogger(__name__)


class BuildSuperseded(Exception):
    """The workspace's choice of model changed while a model was being built for it (another
    model chosen, or the change cancelled): the build stops, its generation is not switched
    to, and the newer choice's own build carries on. Raised by `hand_over` and the build
    loops (ModelSwitch, BuildSteps), which catch it and end quietly."""


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
            raise BuildSuperseded
        if not last:  # the last attempt switches anyway: no counting (AWS: two queries)
            held = route.index.count(workspace_id)
            chunks = metadata.count_chunks(workspace_id)
            if held != chunks:
                log.warning("workspace %s: %d entries for %d chunks", workspace_id, held, chunks)
                return None
        old = routes.chosen(workspace_id)
        routes.save_state(workspace_id, {"serving": target, "building": None})
        return old
