"""Which embedding model and index generation serve a workspace (DESIGN decision 6).

A workspace is served by one route: the server's default model and generation, or a model
config's. While a change of model is being built, writes reach the route being built too,
so nothing is lost when it switches.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from bunko.ports.embedding import Embedder
from bunko.ports.index import SearchIndex

DEFAULT_MODEL = "default"  # the route of the server's own embedder (BUNKO_EMBEDDER)


@dataclass(frozen=True)
class EmbeddingRoute:
    """One index generation and the model that fills it and embeds its queries."""

    model: str  # DEFAULT_MODEL or a model config id
    embedder: Embedder | None
    index: SearchIndex


class EmbeddingRoutes(Protocol):
    def serving(self, workspace_id: str) -> EmbeddingRoute:
        """The route that answers the workspace's searches."""

    def building(self, workspace_id: str) -> EmbeddingRoute | None:
        """The route a change of model is filling, or None."""

    def steady(self) -> AbstractContextManager[None]:
        """Hold the routes steady: no switch happens inside the block (a write reads its
        targets and writes them inside one)."""


# (workspace id, model config id) -> that config's route; raises ValidationError when the
# config cannot serve as an embedding model here (wrong provider, endpoint refused, AWS).
RouteOpener = Callable[[str, str], EmbeddingRoute]


def write_targets(routes: EmbeddingRoutes, workspace_id: str) -> list[EmbeddingRoute]:
    """Every route a write must reach: the serving one, then one being built (call inside
    `routes.steady()`)."""
    serving, building = routes.serving(workspace_id), routes.building(workspace_id)
    if building is None or building.model == serving.model:
        return [serving]
    return [serving, building]
