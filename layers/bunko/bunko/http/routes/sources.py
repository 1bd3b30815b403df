"""/sources: a library's connectors (docs/sources.md). Anyone in a library sees its sources
and their last sync; only its owners add, sync or remove one, since a source writes and
deletes documents everyone in it reads. A Git source here names an https URL only (a path
on the server is the operator's, from the CLI). A source's credential is write-only: given
when it is added or replaced later, and never answered (`hasCredential` says whether there
is one). Mounted where the shape keeps sources."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from bunko.http.deps import Owner, Reader, ReadsOnly, ServicesDep
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
    "space": "space",
    "edition": "edition",
    "attachments": "attachments",
    "driveId": "drive_id",
    "itemId": "item_id",
    "folderId": "folder_id",
    "sharedDriveId": "shared_drive_id",
    "export": "export",
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
    kind: Literal["web", "git", "confluence", "sharepoint", "gdrive"]
    name: Annotated[str, Field(min_length=1, max_length=64)]
    # web: start or sitemap; git: https; confluence: the site (…/wiki on Cloud); sharepoint,
    # gdrive: the API's root (default: Microsoft Graph's, Google's)
    url: Annotated[str | None, Field(min_length=1, max_length=2048)] = None
    branch: Annotated[str | None, Field(min_length=1, max_length=200)] = None
    space: Annotated[str | None, Field(min_length=1, max_length=255)] = None  # confluence
    attachments: bool | None = None  # confluence: its pages' attachments too
    edition: Literal["cloud", "datacenter"] | None = None  # confluence; None: by the host
    driveId: Annotated[str | None, Field(min_length=1, max_length=400)] = None  # sharepoint
    itemId: Annotated[str | None, Field(min_length=1, max_length=400)] = None  # its folder
    folderId: Annotated[str | None, Field(min_length=1, max_length=400)] = None  # gdrive
    sharedDriveId: Annotated[str | None, Field(min_length=1, max_length=400)] = None  # its drive
    export: Literal["text", "markdown", "docx"] | None = None  # gdrive: how Docs are kept
    include: Annotated[list[Glob] | None, Field(max_length=100)] = None
    exclude: Annotated[list[Glob] | None, Field(max_length=100)] = None
    folder: Annotated[str | None, Field(min_length=1, max_length=200)] = None
    maxPages: int | None = None
    maxFiles: int | None = None
    maxBytes: int | None = None
    maxSeconds: int | None = None
    every: Every = format_every(DEFAULT_EVERY)
    paused: bool = False
    # The secret the connector reads its service with (kept encrypted, never answered).
    credential: Annotated[str | None, Field(min_length=1, max_length=4096)] = None


class CredentialUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    credential: Annotated[str | None, Field(min_length=1, max_length=4096)]  # null: remove


class SourceTry(SourceCreate):
    """What a test of the connection reads: the settings a source would be added with (its
    name is not needed)."""

    name: Annotated[str | None, Field(min_length=1, max_length=64)] = None


class SourceSchedule(BaseModel):
    """What PATCH changes: what is not given stays."""

    model_config = ConfigDict(extra="forbid")
    every: Every | None = None
    paused: bool | None = None


class SourceChecked(BaseModel):
    ok: bool  # the place answered as a source of this kind should
    message: str
    status: int | None  # the HTTP status it answered with (none when it did not answer)
    url: str


class SourcePublic(BaseModel):
    id: str
    name: str
    kind: str
    source: str  # what its documents' `source` says
    folder: str
    settings: dict[str, Any]
    paused: bool  # no sync runs until it is resumed
    lastSync: dict[str, Any] | None
    hasCredential: bool
    every: str  # "6h", or "off": on demand only
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
            paused=r.paused,
            lastSync=r.last_sync,
            hasCredential=r.has_credential,
            every=format_every(r.every),
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
    throttled: int

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
            throttled=r.throttled,
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
    """Owners: add a website, a Git repository (https), a Confluence space, a SharePoint or
    OneDrive drive, or a Google Drive folder to the library; its URL passes the outbound
    guard."""
    record = services.sources.add(
        principal.workspace_id,
        body.kind,
        body.name,
        _settings(body),
        credential=body.credential,
        every=body.every,
        paused=body.paused,
    )
    return SourcePublic.of(record)


@router.patch("/{name}", response_model=SourcePublic, responses=error_responses(400, 404))
def schedule_source(
    name: SourceName, body: SourceSchedule, principal: Owner, services: ServicesDep
) -> SourcePublic:
    """Owners: change when the source syncs by itself (`every`, "off" for on demand only)
    or pause it (no sync runs, on demand or scheduled, until it is resumed; its documents
    stay) and resume it."""
    changes: dict[str, Any] = {"paused": body.paused}
    if body.every is not None:
        changes["every"] = body.every
    record = services.sources.set_schedule(principal.workspace_id, name, **changes)
    return SourcePublic.of(record)


@router.put("/{name}/credential", response_model=SourcePublic, responses=error_responses(400, 404))
def set_source_credential(
    name: SourceName, body: CredentialUpdate, principal: Owner, services: ServicesDep
) -> SourcePublic:
    """Owners: replace the source's credential (null removes it); the answer never holds it."""
    record = services.sources.set_credential(principal.workspace_id, name, body.credential)
    return SourcePublic.of(record)


def _settings(body: SourceCreate) -> dict[str, Any]:
    given = body.model_dump(
        exclude_none=True, exclude={"kind", "name", "credential", "every", "paused"}
    )
    return {_SETTINGS[k]: v for k, v in given.items()}


@router.post(
    "/test",
    response_model=SourceChecked,
    responses=error_responses(400),
    dependencies=[ReadsOnly],  # one request out, nothing kept
)
def test_source(body: SourceTry, principal: Owner, services: ServicesDep) -> SourceChecked:
    """Owners: test the connection a source with these settings would make (its URL through
    the outbound guard, then one request), without adding or syncing anything. 400 for a
    URL the guard refuses; a place that does not answer as expected is `ok: false`. A
    Confluence, SharePoint or Google Drive test uses the body's `credential` for its request
    (and the token exchange before it, for client credentials or a service account key); it
    is never kept nor in the answer."""
    checked = services.sources.check_connection(
        body.kind, _settings(body), credential=body.credential
    )
    return SourceChecked(**checked.to_dict())


@router.post("/{name}/sync", response_model=SourceSync, responses=error_responses(404, 409))
def sync_source(name: SourceName, principal: Owner, services: ServicesDep) -> SourceSync:
    """Owners: sync the source now and answer what changed (the request lasts as long as
    the sync, within the source's bounds); 409 while it syncs already or is paused."""
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
