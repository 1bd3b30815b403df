"""/sources: a library's connectors (docs/sources.md). Anyone in a library sees its sources
and their last sync; only its owners add, sync or remove one, since a source writes and
deletes documents everyone in it reads. A Git source here names an https URL only (a path
on the server is the operator's, from the CLI). Mounted where the shape keeps sources."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from bunko.http.deps import Owner, Reader, ServicesDep
from bunko.http.errors import error_responses
from bunko.services.sources import DEFAULT_EVERY, SourceRecord, SyncReport, format_every

router = APIRouter(prefix="/sources", tags=["sources"], responses=error_responses(401, 403))

SourceName = Annotated[str, Path(min_length=1, max_length=64)]
Glob = Annotated[str, Field(min_length=1, max_length=300)]
# When a source syncs by itself: "30m", "6h", "1d" (5 minutes to 30 days), or "off".
Every = Annotated[str, Field(min_length=1, max_length=16)]
# request field → setting
_SETTINGS = {
    "url": "url",
    "branch": "branch",
    "include": "include",
    "exclude": "exclude",
    "folder": "folder",
    "maxPages": "max_pages",
    "maxFiles": "max_files",
    "maxBytes": "max_bytes",
    "maxSeconds": "max_seconds",
}


class SourceCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["web", "git"]
    name: Annotated[str, Field(min_length=1, max_length=64)]
    url: Annotated[str, Field(min_length=1, max_length=2048)]  # web: start or sitemap; git: https
    branch: Annotated[str | None, Field(min_length=1, max_length=200)] = None
    include: Annotated[list[Glob] | None, Field(max_length=100)] = None
    exclude: Annotated[list[Glob] | None, Field(max_length=100)] = None
    folder: Annotated[str | None, Field(min_length=1, max_length=200)] = None
    maxPages: int | None = None
    maxFiles: int | None = None
    maxBytes: int | None = None
    maxSeconds: int | None = None
    every: Every = format_every(DEFAULT_EVERY)
    paused: bool = False


class SourceSchedule(BaseModel):
    """What PATCH changes: what is not given stays."""

    model_config = ConfigDict(extra="forbid")
    every: Every | None = None
    paused: bool | None = None


class SourcePublic(BaseModel):
    id: str
    name: str
    kind: str
    source: str  # what its documents' `source` says
    folder: str
    settings: dict[str, Any]
    lastSync: dict[str, Any] | None
    every: str  # "6h", or "off": on demand only
    paused: bool
    nextSyncAt: float | None  # epoch seconds; None: paused or on demand only

    @classmethod
    def of(cls, r: SourceRecord) -> SourcePublic:
        return cls(
            id=r.id,
            name=r.name,
            kind=r.kind,
            source=r.source,
            folder=r.folder,
            settings=r.settings,
            lastSync=r.last_sync,
            every=format_every(r.every),
            paused=r.paused,
            nextSyncAt=r.next_sync_at,
        )


class SourceSync(BaseModel):
    added: list[str]
    changed: list[str]
    deleted: list[str]
    renamed: list[list[str]]  # [old path, new path]
    unchanged: int
    errors: dict[str, str]
    requests: int
    fetched: int
    notModified: int
    bytes: int
    seconds: float
    complete: bool
    stoppedBy: str | None
    revision: str | None
    failed: str | None

    @classmethod
    def of(cls, r: SyncReport) -> SourceSync:
        raw = r.to_dict()
        return cls(
            **{k: raw[k] for k in ("added", "changed", "deleted", "renamed", "unchanged")},
            **{k: raw[k] for k in ("errors", "requests", "fetched", "bytes", "seconds")},
            notModified=r.not_modified,
            complete=r.complete,
            stoppedBy=r.stopped_by,
            revision=r.revision,
            failed=r.failed,
        )


class SourceRemoved(BaseModel):
    name: str
    deletedDocuments: int


@router.get("", response_model=list[SourcePublic])
def list_sources(principal: Reader, services: ServicesDep) -> list[SourcePublic]:
    """The library's sources, each with its last sync (counts, errors, when)."""
    return [SourcePublic.of(r) for r in services.sources.list(principal.workspace_id)]


@router.post("", status_code=201, response_model=SourcePublic, responses=error_responses(400, 409))
def add_source(body: SourceCreate, principal: Owner, services: ServicesDep) -> SourcePublic:
    """Owners: add a website or a Git repository (https) to the library; its URL passes
    the outbound guard."""
    given = body.model_dump(exclude_none=True, exclude={"kind", "name", "every", "paused"})
    settings = {_SETTINGS[k]: v for k, v in given.items()}
    record = services.sources.add(
        principal.workspace_id,
        body.kind,
        body.name,
        settings,
        every=body.every,
        paused=body.paused,
    )
    return SourcePublic.of(record)


@router.patch("/{name}", response_model=SourcePublic, responses=error_responses(400, 404))
def schedule_source(
    name: SourceName, body: SourceSchedule, principal: Owner, services: ServicesDep
) -> SourcePublic:
    """Owners: change when the source syncs by itself (`every`, "off" for on demand only)
    or pause and resume it."""
    changes: dict[str, Any] = {"paused": body.paused}
    if body.every is not None:
        changes["every"] = body.every
    record = services.sources.set_schedule(principal.workspace_id, name, **changes)
    return SourcePublic.of(record)


@router.post("/{name}/sync", response_model=SourceSync, responses=error_responses(404, 409))
def sync_source(name: SourceName, principal: Owner, services: ServicesDep) -> SourceSync:
    """Owners: sync the source now and answer what changed (the request lasts as long as
    the sync, within the source's bounds)."""
    return SourceSync.of(services.sources.sync(principal.workspace_id, name))


@router.delete("/{name}", response_model=SourceRemoved, responses=error_responses(404))
def remove_source(
    name: SourceName,
    principal: Owner,
    services: ServicesDep,
    keepDocuments: Annotated[bool, Query()] = False,
) -> SourceRemoved:
    """Owners: remove the source and, unless keepDocuments, the documents it put here."""
    deleted = services.sources.remove(principal.workspace_id, name, keep_documents=keepDocuments)
    return SourceRemoved(name=name, deletedDocuments=deleted)
