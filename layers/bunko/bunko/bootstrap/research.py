"""The research wing, wired: projects and sealed corpora, where the shape has a research store
and a passage scorer (None elsewhere: the research tools and routes answer unavailable)."""

from __future__ import annotations

from bunko.bootstrap.adapters import Adapters
from bunko.config import Settings
from bunko.services.bounds import TokenBucket
from bunko.services.research import ResearchService
from bunko.services.search import SearchService


def build_research(
    settings: Settings, adapters: Adapters, search: SearchService
) -> ResearchService | None:
    if adapters.research is None or adapters.passage_scorer is None:
        return None
    account = adapters.accounts
    seal_rate = None
    if account is not None:
        seal_rate = TokenBucket(
            account.stores.login_attempts,
            burst=settings.research_seal_burst,
            per_minute=settings.research_seals_per_minute,
            what="research seal",
        )
    return ResearchService(
        store=adapters.research,
        metadata=adapters.metadata,
        search=search,
        scorer=adapters.passage_scorer,
        seal_rate=seal_rate,
        max_corpus_revisions=settings.research_max_corpus_revisions,
    )
