"""The sources wing, wired: connectors over the settings store, a website fetcher and Git
copies under the data folder, both behind the outbound guard. On AWS (the settings store is
the DynamoDB table) the same wing, without Git: the functions' runtime has no `git` binary,
so a Git source is refused there with a message (docs/sources.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from bunko.bootstrap.adapters import Adapters
from bunko.config import Settings
from bunko.errors import ValidationError
from bunko.ports.sources import GitRepos
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
    refused: dict[str, str] = {}
    if settings.backend == "local":
        from bunko.adapters.local.git_cli import GitCli

        git: GitRepos = GitCli(settings.data_dir / "sources", guard, local_paths=True)
    else:
        git = NoGit()
        refused["git"] = GIT_ON_AWS
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
        refuse_kinds=refused,
        # On AWS a sync asked for over REST runs in the api function (25 s): it stops in
        # time and the scheduled sync function goes on from there.
        on_demand_seconds=None if settings.backend == "local" else AWS_ON_DEMAND_SECONDS,
    )
    return SourcesWing(sources=sources)


AWS_ON_DEMAND_SECONDS = 15.0
GIT_ON_AWS = (
    "git sources are not synced on AWS: its functions have no git binary; sync the "
    "repository with `bunko` on a machine, or publish it as a website (a web source)"
)


class NoGit:
    """The Git port where there is no `git` (AWS): Sources refuses git sources before any
    call, so reaching this is a bug."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise ValidationError(GIT_ON_AWS)

    fetch = tree = diff = read = _refuse

    def forget(self, key: str) -> None:
        pass  # nothing was ever copied
