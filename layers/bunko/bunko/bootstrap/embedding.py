"""Each workspace's embedding model, wired: its generations (the model and index generation that
serve it), the model configs that name them, and the switch that changes them (in a thread
on one machine, in queued steps on AWS)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bunko.bootstrap.adapters import Adapters
from bunko.bootstrap.workspace_embedders import NO_ROUTES
from bunko.config import Settings
from bunko.ports import DEFAULT_MODEL, EmbeddingGeneration
from bunko.services.embedding import (
    BuildSteps,
    ChosenGenerations,
    ModelConfigService,
    ModelSwitch,
    Refiner,
    RefiningGenerations,
    SharedGeneration,
)


def workspace_generations(
    settings: Settings, adapters: Adapters, closers: list[Callable[[], None]]
) -> SharedGeneration:
    """Each workspace's model and index generation: its own model config's where the shape
    can hold one (model configs need the account stores), else the default's."""
    default = EmbeddingGeneration(DEFAULT_MODEL, adapters.embedder, adapters.index)
    if adapters.generation_opener is None or adapters.accounts is None:
        return SharedGeneration(default)
    # The opener only reads configs (endpoint, key): it needs no generations of its own.
    reader = ModelConfigService(
        adapters.accounts.stores.model_configs,
        adapters.accounts.cipher,
        allow_private_endpoints=settings.private_model_endpoints,
    )
    opened: list[Callable[[], None]] = []
    opener = adapters.generation_opener(reader, opened)
    closers.append(lambda: [close() for close in opened])
    store = adapters.accounts.stores.settings
    if adapters.refined:
        return RefiningGenerations(default, store, opener, adapters.refined)
    return ChosenGenerations(default, store, opener)


def model_switch(
    settings: Settings, adapters: Adapters, generations: SharedGeneration, refiner: Refiner | None
) -> ModelSwitch | None:
    """The workspace's embedding model: chosen through /user-settings (selectedEmbeddingId),
    honoured by uploads (embeddingModelId), built by the ingest function's steps on AWS.
    None without model configs (no account stores)."""
    if adapters.accounts is None:
        return None
    own = generations if isinstance(generations, ChosenGenerations) else None
    configs = ModelConfigService(
        adapters.accounts.stores.model_configs,
        adapters.accounts.cipher,
        allow_private_endpoints=settings.private_model_endpoints,
        usage=own,
    )
    steps = None
    if own is not None and adapters.send_build_step is not None:
        steps = BuildSteps(
            metadata=adapters.metadata,
            generations=own,
            store=own.store,
            send=adapters.send_build_step,
            batch_size=settings.embed_batch_size,
            race_seconds=settings.model_build_race_seconds,
        )
    return ModelSwitch(
        metadata=adapters.metadata,
        configs=configs,
        generations=own,
        refusal=NO_ROUTES,
        default_name=adapters.embedder.name if adapters.embedder else None,
        batch_size=settings.embed_batch_size,
        refiner=refiner,
        steps=steps,
    )


def embedding_model_names(settings: Settings, adapters: Adapters) -> frozenset[str]:
    """The names an upload's embeddingModelId config may give the active model by."""
    embedder = adapters.embedder
    if embedder is None:
        return frozenset()
    names = {embedder.name, getattr(embedder, "model", None), getattr(embedder, "model_id", None)}
    if settings.backend == "local":
        names.add(settings.embedder)  # "use", "e5", ...
    return frozenset(n for n in names if isinstance(n, str) and n)


@dataclass(frozen=True)
class EmbeddingWing:
    """The background refiner and the switch; field names are the container's (`Services`)."""

    refiner: Refiner | None  # progressive quality (BUNKO_REFINE_EMBEDDER), not started
    model_switch: ModelSwitch | None  # None without model configs (no account stores)


def build_embedding(
    settings: Settings,
    adapters: Adapters,
    generations: SharedGeneration,
    busy: Callable[[], bool],
    closers: list[Callable[[], None]],
) -> EmbeddingWing:
    """`busy`: whether ingest has work queued (the refiner waits for a quiet queue)."""
    refiner = None
    if isinstance(generations, RefiningGenerations):
        refiner = Refiner(
            metadata=adapters.metadata,
            generations=generations,
            busy=busy,
            quiet_seconds=settings.refine_quiet_seconds,
        )
        closers.insert(0, refiner.stop)  # before the worker and the stores
    return EmbeddingWing(refiner, model_switch(settings, adapters, generations, refiner))
