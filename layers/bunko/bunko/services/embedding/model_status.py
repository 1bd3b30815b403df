"""What ModelSwitch.status and Refiner.status answer: typed records the doors render in their
own dialect (REST's /embedding-model in aurak's camelCase)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ModelRef:
    """A model a workspace can be served by."""

    config_id: str | None  # its model config; None: the server's default model
    name: str | None  # None: the config is gone
    model_id: str | None = None  # the provider's model id (None for the default model)


@dataclass(frozen=True, kw_only=True)
class BuildProgress(ModelRef):
    """The model being built for a workspace, and how far it is."""

    chunks_done: int
    chunks_total: int
    error: str | None


@dataclass(frozen=True, kw_only=True)
class RefinedStatus:
    """The stronger model refining a default-model workspace (BUNKO_REFINE_EMBEDDER)."""

    name: str | None
    chunks_refined: int
    chunks_total: int
    serving: bool  # it answers the workspace's searches now


@dataclass(frozen=True, kw_only=True)
class ModelStatus:
    serving: ModelRef
    building: BuildProgress | None
    refined: RefinedStatus | None = None  # only while the default model serves, with a refiner
