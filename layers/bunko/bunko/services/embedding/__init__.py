"""Embedding models per workspace, end to end: generations, model configs, the switch, its build
steps, the self-refreshing embedder of a model config, the background refiner and
reindexing."""

from bunko.services.embedding.config_embedder import RECHECK_SECONDS, ConfigEmbedder
from bunko.services.embedding.embedding_generations import (
    SCOPE,
    ChosenGenerations,
    SharedGeneration,
    delete_document_everywhere,
    relabel_document_everywhere,
    shared_generation,
)
from bunko.services.embedding.endpoint_guard import (
    check_model_endpoint,
    check_outbound_url,
    check_public_endpoint,
)
from bunko.services.embedding.index_entries import entries_for
from bunko.services.embedding.model_build_steps import BuildSteps, TimeLeft
from bunko.services.embedding.model_configs import ModelConfigService
from bunko.services.embedding.model_status import (
    BuildProgress,
    ModelRef,
    ModelStatus,
    RefinedStatus,
)
from bunko.services.embedding.model_switch import ModelSwitch
from bunko.services.embedding.refinement import Refiner, RefiningGenerations
from bunko.services.embedding.reindex import embed_texts, reindex_served

__all__ = [
    "RECHECK_SECONDS",
    "SCOPE",
    "BuildProgress",
    "BuildSteps",
    "ChosenGenerations",
    "ConfigEmbedder",
    "ModelConfigService",
    "ModelRef",
    "ModelStatus",
    "ModelSwitch",
    "RefinedStatus",
    "Refiner",
    "RefiningGenerations",
    "SharedGeneration",
    "TimeLeft",
    "check_model_endpoint",
    "check_outbound_url",
    "check_public_endpoint",
    "delete_document_everywhere",
    "embed_texts",
    "entries_for",
    "reindex_served",
    "relabel_document_everywhere",
    "shared_generation",
]
