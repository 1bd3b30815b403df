"""The sources wing, wired: connectors over the settings store, a website fetcher and Git
copies read with dulwich (pure Python: the AWS functions' runtime has no `git` binary), both
behind the outbound guard. The Git copies live under the data folder on one machine, and in
a bounded scratch folder of the function's /tmp on AWS, where local paths are refused."""

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

    sources: Sources | None  # None where the shape keeps no accounts' settings store


def build_sources(
    settings: Settings,
    adapters: Adapters,
    ingest: IngestService,
    library: Library,
    closers: list[Callable[[], None]],
) -> SourcesWing:
    if adapters.accounts is None:
        return SourcesWing(sources=None)
    from bunko.adapters.web_fetcher import HttpWebFetcher

    def guard(url: str, allow_private: bool) -> str:
        return check_outbound_url(url, what="source", allow_private=allow_private)

    web = HttpWebFetcher(guard)
    closers.append(web.close)
    from bunko.adapters.git_dulwich import DulwichRepos

    local = settings.backend == "local"
    git = DulwichRepos(
        settings.data_dir / "sources" if local else settings.scratch / "bunko-git",
        guard,
        local_paths=local,  # on AWS a path would name the function's own files
        max_fetch_bytes=GIT_FETCH_BYTES,
        max_disk_bytes=GIT_COPIES_BYTES if local else GIT_COPIES_BYTES_AWS,
    )
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
        # On AWS a sync asked for over REST runs in the api function (25 s): it stops in
        # time and the scheduled sync function goes on from there.
        on_demand_seconds=None if settings.backend == "local" else AWS_ON_DEMAND_SECONDS,
    )
    return SourcesWing(sources=sources)


AWS_ON_DEMAND_SECONDS = 15.0
# A Git fetch reads at most this much (a shallow fetch of one branch: its files, compressed).
GIT_FETCH_BYTES = 256 << 20
# The Git copies together, at most: on AWS within the functions' 512 MB of /tmp (the
# default ephemeral storage), leaving room for what else a function writes there.
GIT_COPIES_BYTES = 4 << 30
GIT_COPIES_BYTES_AWS = 320 << 20
