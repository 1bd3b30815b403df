"""Which embedding model and index generation serve a workspace (DESIGN decision 6).

A workspace's writes embed with its chosen generation: the server's default model and generation,
or a model config's. While a change of model is being built, writes reach the generation being
built too, so nothing is lost when it switches. Searches are answered by the chosen generation,
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

DEFAULT_MODEL = "default"  # the generation of the server's own embedder (BUNKO_EMBEDDER)


@dataclass(frozen=True)
class EmbeddingGeneration:
    """One index generation and the model that fills it and embeds its queries."""

    model: str  # DEFAULT_MODEL or a model config id
    embedder: Embedder | None
    index: SearchIndex


class EmbeddingGenerations(Protocol):
    default: EmbeddingGeneration  # the server's own model and index (BUNKO_EMBEDDER)

    def chosen(self, workspace_id: str) -> EmbeddingGeneration:
        """The generation of the workspace's chosen model: what its writes embed with."""

    def serving(self, workspace_id: str) -> EmbeddingGeneration:
        """The generation that answers the workspace's searches (and embeds their queries)."""

    def building(self, workspace_id: str) -> EmbeddingGeneration | None:
        """The generation a change of model is filling, or None."""

    def followers(self, workspace_id: str) -> list[EmbeddingGeneration]:
        """Generations refined in the background: a write reaches them without vectors (their
        embedder is None), which takes the written chunks out until they are re-embedded."""

    def steady(self) -> AbstractContextManager[None]:
        """Hold the generations steady: no switch happens inside the block (a write reads its
        targets and writes them inside one)."""


# (workspace id, model config id) -> that config's generation; raises ValidationError when the
# config cannot serve as an embedding model here (wrong provider, endpoint refused, AWS).
GenerationOpener = Callable[[str, str], EmbeddingGeneration]


def write_targets(
    generations: EmbeddingGenerations, workspace_id: str
) -> list[EmbeddingGeneration]:
    """Every generation a write must reach: the chosen one, one being built, then the followers
    (call inside `generations.steady()`)."""
    chosen, building = generations.chosen(workspace_id), generations.building(workspace_id)
    targets = [chosen]
    if building is not None and building.model != chosen.model:
        targets.append(building)
    return targets + generations.followers(workspace_id)
