"""The sources wing, wired: connectors over the settings store, a website fetcher and Git
copies under the data folder, both behind the outbound guard. One machine only for now (the
AWS shape's scheduled sync is issue 48's point 4)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bunko.bootstrap.adapters import Adapters
from bunko.config import Settings
from bunko.services.embedding import check_outbound_url
from bunko.services.ingest import IngestService
from bunko.services.library import Library
from bunko.services.sources import Sources


@dataclass(frozen=True)
class SourcesWing:
    """Field names are the container's (`Services`)."""

    sources: Sources | None  # None where the shape keeps no connectors (AWS, for now)


def build_sources(
    settings: Settings,
    adapters: Adapters,
    ingest: IngestService,
    library: Library,
    closers: list[Callable[[], None]],
) -> SourcesWing:
    if settings.backend != "local" or adapters.accounts is None:
        return SourcesWing(sources=None)
    from bunko.adapters.local.git_cli import GitCli
    from bunko.adapters.web_fetcher import HttpWebFetcher

    def guard(url: str, allow_private: bool) -> str:
        return check_outbound_url(url, what="source", allow_private=allow_private)

    web = HttpWebFetcher(guard)
    closers.append(web.close)
    git = GitCli(settings.data_dir / "sources", guard, local_paths=True)
    sources = Sources(
        store=adapters.accounts.stores.settings,
        ingest=ingest,
        library=library,
        web=web,
        git=git,
        check_url=guard,
        cipher=adapters.accounts.cipher,  # the one model configs' API keys are kept with
        private_for_operator=settings.private_sources(operator=True),
        private_for_people=settings.private_sources(operator=False),
    )
    return SourcesWing(sources=sources)
