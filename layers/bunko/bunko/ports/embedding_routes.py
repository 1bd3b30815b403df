"""Which embedding model and index generation serve a workspace (DESIGN decision 6).

A workspace's writes embed with its chosen route: the server's default model and generation,
or a model config's. While a change of model is being built, writes reach the route being
built too, so nothing is lost when it switches. Searches are answered by the chosen route,
or by a refined generation of it (a stronger model re-embedding the same chunks in the
background, services/embedding/refinement.py) whenever that holds every chunk of the workspace.
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
    default: EmbeddingRoute  # the server's own model and index (BUNKO_EMBEDDER)

    def chosen(self, workspace_id: str) -> EmbeddingRoute:
        """The route of the workspace's chosen model: what its writes embed with."""

    def serving(self, workspace_id: str) -> EmbeddingRoute:
        """The route that answers the workspace's searches (and embeds their queries)."""

    def building(self, workspace_id: str) -> EmbeddingRoute | None:
        """The route a change of model is filling, or None."""

    def followers(self, workspace_id: str) -> list[EmbeddingRoute]:
        """Generations refined in the background: a write reaches them without vectors (their
        embedder is None), which takes the written chunks out until they are re-embedded."""

    def steady(self) -> AbstractContextManager[None]:
        """Hold the routes steady: no switch happens inside the block (a write reads its
        targets and writes them inside one)."""


# (workspace id, model config id) -> that config's route; raises ValidationError when the
# config cannot serve as an embedding model here (wrong provider, endpoint refused, AWS).
RouteOpener = Callable[[str, str], EmbeddingRoute]


def write_targets(routes: EmbeddingRoutes, workspace_id: str) -> list[EmbeddingRoute]:
    """Every route a write must reach: the chosen one, one being built, then the followers
    (call inside `routes.steady()`)."""
    chosen, building = routes.chosen(workspace_id), routes.building(workspace_id)
    targets = [chosen]
    if building is not None and building.model != chosen.model:
        targets.append(building)
    return targets + routes.followers(workspace_id)
