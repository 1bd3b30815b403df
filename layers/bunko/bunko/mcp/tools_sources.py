"""The source tools: list a library's sources (connectors) with their last sync, and sync one
now. As REST's /sources (docs/sources.md): anyone in the library lists; only its owners sync,
since a sync writes and deletes documents everyone in it reads."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from bunko.domain.auth import SCOPE_READ, SCOPE_WRITE
from bunko.errors import PermissionDeniedError, ServiceUnavailableError
from bunko.mcp.inputs import NoInput
from bunko.mcp.registry import ToolContext, ToolSpec, tool
from bunko.operations.models import Count, Output, StrictInput
from bunko.services.sources import SourceRecord, Sources


class SourceNameInput(StrictInput):
    name: str = Field(
        min_length=1, max_length=64, description="The source's name in the library (list_sources)."
    )


class SourceOutput(Output):
    id: str
    name: str
    kind: str = Field(description="web, git, or another connector's kind.")
    source: str = Field(description="What its documents' `source` says: connector:<id>.")
    folder: str = Field(description="Where its documents' paths start in the library.")
    url: str | None = Field(None, description="The place it reads.")
    paused: bool = Field(description="True: no sync runs until it is resumed.")
    last_sync: dict[str, Any] | None = Field(
        description="Its last sync: when (`at`, Unix seconds), the counts added, changed, "
        "deleted, renamed, unchanged; `errors` (path → why, the first 50), `error_count`, "
        "`complete`, `failed`; null when never synced."
    )

    @classmethod
    def of(cls, r: SourceRecord) -> SourceOutput:
        return cls(
            id=r.id,
            name=r.name,
            kind=r.kind,
            source=r.source,
            folder=r.folder,
            url=r.settings.get("url"),
            paused=r.paused,
            last_sync=r.last_sync,
        )


class ListSourcesOutput(Output):
    sources: list[SourceOutput]


class SyncSourceOutput(Output):
    name: str
    added: list[str] = Field(description="Library paths of the documents added.")
    changed: list[str]
    deleted: list[str]
    renamed: list[list[str]] = Field(description="[old path, new path] pairs.")
    unchanged: Count
    errors: dict[str, str] = Field(description="Each file's error: path or URL → why.")
    requests: Count
    fetched: Count
    complete: bool = Field(description="False: a bound stopped it; the next sync goes on.")
    stopped_by: str | None
    failed: str | None = Field(description="Why the whole sync could not run (nothing deleted).")


def _sources(ctx: ToolContext) -> Sources:
    if ctx.services.sources is None:
        raise ServiceUnavailableError("sources are not available on this deployment yet")
    return ctx.services.sources


@tool(title="List sources", scope=SCOPE_READ, read_only=True, destructive=False, idempotent=True)
def list_sources(ctx: ToolContext, args: NoInput) -> ListSourcesOutput:
    """The library's sources (connectors: a website, a Git repository, ...), each with its
    kind, where it reads, whether it is paused and its last sync (counts and each file's
    error). A document's `source` (list_documents) names the source that owns it;
    search_text's and ask's `source` filter takes a source's name."""
    found = _sources(ctx).list(ctx.workspace_id)
    return ListSourcesOutput(sources=[SourceOutput.of(r) for r in found])


@tool(
    title="Sync a source",
    scope=SCOPE_WRITE,
    read_only=False,
    destructive=True,  # what the source no longer has is deleted from the library
    idempotent=True,  # a second sync of an unchanged place changes nothing
    open_world=True,
)
def sync_source(ctx: ToolContext, args: SourceNameInput) -> SyncSourceOutput:
    """Sync one source now (the library's owners only) and answer what changed: documents
    added, changed, deleted and renamed, each file's error, and whether a bound stopped it.
    The call lasts as long as the sync. A paused source, or one syncing already, is refused.
    New and changed documents are searchable once indexed."""
    if not ctx.principal.manages():
        raise PermissionDeniedError("only the library's owners may do this")
    report = _sources(ctx).sync(ctx.workspace_id, args.name)
    raw = report.to_dict()
    return SyncSourceOutput(
        name=args.name,
        **{k: raw[k] for k in ("added", "changed", "deleted", "renamed", "unchanged", "errors")},
        requests=report.requests,
        fetched=report.fetched,
        complete=report.complete,
        stopped_by=report.stopped_by,
        failed=report.failed,
    )


SOURCE_TOOLS: tuple[ToolSpec, ...] = (list_sources, sync_source)
