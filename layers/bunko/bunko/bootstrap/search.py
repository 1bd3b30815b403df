"""The search wing, wired: hybrid retrieval over each workspace's generation, with the operator's
defaults (Settings) under what a workspace saved."""

from __future__ import annotations

from functools import partial

from bunko.bootstrap.adapters import Adapters
from bunko.bootstrap.settings import Preferences
from bunko.config import Settings
from bunko.ports import EmbeddingGenerations
from bunko.services.search import SearchService
from bunko.services.sources import named_source


def build_search(
    settings: Settings,
    adapters: Adapters,
    generations: EmbeddingGenerations,
    preferences: Preferences | None,
) -> SearchService:
    return SearchService(
        metadata=adapters.metadata,
        generations=generations,
        method=settings.fusion,
        vector_weight=settings.vector_weight,
        candidates=settings.candidates,
        limit=settings.search_limit,
        min_score=settings.min_score,
        saved_defaults=preferences.workspace if preferences else None,
        sources=partial(
            named_source, adapters.accounts.stores.settings if adapters.accounts else None
        ),
    )
