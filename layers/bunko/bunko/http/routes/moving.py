"""A library's move at the REST door (docs/owners.md, "Moving a library"): its owners export it
into an archive and download it; any signed-in person imports an archive into a new library
of theirs. Both run as jobs (services/moving/jobs.py) whose record any process reads, so a
poll may reach another server (another Lambda execution environment) than the start."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

import anyio
from fastapi import APIRouter, File, Form, Query, Security, UploadFile
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, Field

from bunko.domain.auth import SCOPE_WRITE, Principal
from bunko.domain.libraries import MAX_NAME_LENGTH
from bunko.errors import (
    NotFoundError,
    PermissionDeniedError,
    ServiceUnavailableError,
    ValidationError,
)
from bunko.http.deps import AccountsDep, CurrentPrincipal, ServicesDep, bearer
from bunko.http.errors import error_responses
from bunko.ports.downloads import content_disposition
from bunko.services.moving import LibraryMoves, MoveJob, archive_link

router = APIRouter(prefix="/libraries", tags=["libraries"], responses=error_responses(401, 403))
LINK_PATTERN = r"^[A-Za-z0-9_-]{20,100}$"
_BLOCK = 1 << 20
LINK_SECONDS = 300  # the bucket's signed link to an archive, on AWS
UPLOAD_SECONDS = 900  # the bucket's signed PUT of an archive to import


class ExportStart(BaseModel):
    conversations: bool = Field(False, description="Also the conversations kept in it.")
    vectors: bool = Field(False, description="Also each passage's vector.")


_DEFAULTS = ExportStart()  # a body left out


class ImportResult(BaseModel):
    """What an import did (when done): as `bunko import` prints it."""

    libraryName: str
    added: int
    unchanged: int
    indexed: int
    failed: dict[str, str]
    skipped: dict[str, str]
    pending: list[str]
    membersAdded: list[str]
    membersMissing: list[str]
    sourcesAdded: list[str]
    sourcesSkipped: dict[str, str]
    conversationsAdded: int
    conversationsSkipped: int
    revisionsAdded: int = Field(description="Earlier revisions written before the current.")
    answersAdded: int = Field(description="Marked answers and the missing list's questions.")
    itemsEdited: int = Field(description="Passages edited by hand, restored.")
    itemsDeleted: int = Field(description="Passages deleted by hand, deleted again.")
    vectorsReused: int = Field(description="Passages given the archive's vector.")
    vectorsEmbedded: int = Field(description="Passages embedded here.")


class MoveOut(BaseModel):
    id: str
    kind: Literal["export", "import"]
    libraryId: str
    status: Literal["running", "done", "failed"]
    phase: str  # "exporting"; "importing", then "indexing"
    done: int
    total: int
    error: str | None = None
    startedAt: datetime
    finishedAt: datetime | None = None
    download: str | None = Field(
        None,
        description="A finished export: a link to its archive, a path on this API that "
        "needs no token, good for `expiresIn` seconds.",
    )
    expiresIn: int | None = None
    documents: int | None = None  # an export's
    bytes: int | None = None  # an export's archive size
    result: ImportResult | None = None  # a finished import's

    @classmethod
    def of(cls, job: MoveJob, moves: LibraryMoves) -> MoveOut:
        out = cls(
            id=job.id,
            kind=job.kind,
            libraryId=job.workspace_id,
            status=job.status,
            phase=job.phase,
            done=job.done,
            total=job.total,
            error=job.error,
            startedAt=job.started_at,
            finishedAt=job.finished_at,
        )
        if job.exported is not None and job.status == "done":
            out.download = archive_link(job)
            out.expiresIn = moves.expires_in(job)
            out.documents, out.bytes = job.exported.documents, job.exported.bytes
        report = job.imported
        if report is not None:
            out.result = ImportResult(
                libraryName=report.library_name,
                added=report.added,
                unchanged=report.unchanged,
                indexed=report.indexed,
                failed=report.failed,
                skipped=report.skipped,
                pending=report.pending,
                membersAdded=report.members_added,
                membersMissing=report.members_missing,
                sourcesAdded=report.sources_added,
                sourcesSkipped=report.sources_skipped,
                conversationsAdded=report.conversations_added,
                conversationsSkipped=report.conversations_skipped,
                revisionsAdded=report.revisions_added,
                answersAdded=report.answers_added,
                itemsEdited=report.items_edited,
                itemsDeleted=report.items_deleted,
                vectorsReused=report.vectors_reused,
                vectorsEmbedded=report.vectors_embedded,
            )
        return out


def moves_of(services) -> LibraryMoves:
    if services.moves is None or services.accounts is None:
        raise ServiceUnavailableError("libraries are not available on this backend")
    return services.moves


def owned_library(accounts, principal: Principal, library_id: str) -> str:
    """The workspace of `library_id` when the caller may export it: its owners (with a key
    that writes); 404 for a library they are not in (an admin's too: `bunko export` on the
    machine moves any library)."""
    inside = accounts.libraries.enter(principal, library_id)
    if not inside.has(SCOPE_WRITE) or not inside.manages():
        raise PermissionDeniedError("only the library's owners may do this")
    return inside.workspace_id


@router.post(
    "/{library_id}/export",
    status_code=202,
    response_model=MoveOut,
    responses=error_responses(404, 429),
)
def start_export(
    library_id: str,
    principal: CurrentPrincipal,
    accounts: AccountsDep,
    services: ServicesDep,
    body: ExportStart = _DEFAULTS,
) -> MoveOut:
    """Start writing the library's archive (its owners): originals, paths,
    metadata, categories, sources' settings (never a secret), members by username,
    settings; conversations and vectors when asked. Poll GET …/export/{export_id}; once
    done, its `download` link serves the archive for a few minutes."""
    moves = moves_of(services)
    workspace = owned_library(accounts, principal, library_id)
    job = moves.start_export(
        workspace, by=principal.user_id, conversations=body.conversations, vectors=body.vectors
    )
    return MoveOut.of(job, moves)


@router.get(
    "/{library_id}/export/{export_id}", response_model=MoveOut, responses=error_responses(404)
)
def export_status(
    library_id: str,
    export_id: str,
    principal: CurrentPrincipal,
    accounts: AccountsDep,
    services: ServicesDep,
) -> MoveOut:
    """An export's progress; once done, the link to its archive."""
    moves = moves_of(services)
    workspace = owned_library(accounts, principal, library_id)
    return MoveOut.of(moves.export(workspace, export_id), moves)


@router.get(
    "/{library_id}/export/{export_id}/archive",
    response_model=None,
    responses={
        200: {"content": {"application/zip": {}}, "description": "The library's archive."},
        307: {"description": "On AWS: the archive at a signed link of the bucket."},
        **error_responses(404),
    },
)
def export_archive(
    library_id: str,
    export_id: str,
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    link: Annotated[
        str | None,
        Query(max_length=100, pattern=LINK_PATTERN, description="From the export's `download`."),
    ] = None,
) -> FileResponse | RedirectResponse:
    """A finished export's archive, read from disk as it is sent (on AWS: a redirect to a
    link the bucket serves for a few minutes): for an owner's token, or the export's own
    `download` link (a browser's download sends no token)."""
    moves = moves_of(services)
    if link is not None:
        job = moves.linked(library_id, export_id, link)
    else:
        principal = services.identity.authenticate(credentials.credentials if credentials else None)
        job = moves.archive(owned_library(services.accounts, principal, library_id), export_id)
    assert job.archive is not None
    name = f"{services.accounts.libraries.name_of(job.workspace_id)}.bunko.zip"
    here = moves.archives.local(job.archive)
    if here is None:  # in the bucket: a signed link S3 serves (no Lambda response carries it)
        url = moves.archives.link(job.archive, name, LINK_SECONDS)
        return RedirectResponse(url, status_code=307, headers={"Cache-Control": "no-store"})
    return FileResponse(
        here,
        media_type="application/zip",
        headers={
            "Content-Disposition": content_disposition(name, "application/zip"),
            "Cache-Control": "private, no-store",
        },
    )


class UploadRequest(BaseModel):
    size: int = Field(ge=1, description="The archive's exact size in bytes (signed).")


class UploadOut(BaseModel):
    upload: str = Field(description="Name it as `upload` in POST /libraries/import.")
    url: str
    method: str
    headers: dict[str, str]
    expiresIn: int


# Mounted where archives wait in a bucket (AWS): elsewhere the archive comes in the request.
signed_router = APIRouter(
    prefix="/libraries", tags=["libraries"], responses=error_responses(401, 403)
)


@signed_router.post(
    "/import/upload",
    status_code=201,
    response_model=UploadOut,
    responses=error_responses(413),
)
def sign_import_upload(
    body: UploadRequest, principal: CurrentPrincipal, services: ServicesDep
) -> UploadOut:
    """On AWS: a signed URL to PUT an archive to (a body reaches the API up to 4 MiB), then
    POST /libraries/import with `upload` instead of `file`. The upload is the caller's
    only, and the bucket deletes it after a day."""
    moves = moves_of(services)
    user_id = _person(principal)
    services.uploads.size(body.size, what="archive")
    key = moves.upload_key(user_id)
    signed = moves.archives.upload_link(key, body.size, UPLOAD_SECONDS)
    return UploadOut(
        upload=key,
        url=signed.url,
        method=signed.method,
        headers=signed.headers,
        expiresIn=signed.expires_in,
    )


def _person(principal: Principal) -> str:
    if principal.user_id is None or principal.api_key_id is not None:
        raise PermissionDeniedError("only a signed-in person imports a library (not a key)")
    return principal.user_id


@router.post(
    "/import",
    status_code=202,
    response_model=MoveOut,
    responses=error_responses(400, 404, 409, 413, 429),
)
async def start_import(
    principal: CurrentPrincipal,
    accounts: AccountsDep,
    services: ServicesDep,
    file: Annotated[
        UploadFile | None,
        File(description="An archive `bunko export` or Export wrote."),
    ] = None,
    upload: Annotated[
        str | None,
        Form(
            max_length=120,
            pattern=LINK_PATTERN,
            description="Instead of `file`: the archive PUT to POST …/import/upload's URL.",
        ),
    ] = None,
    name: Annotated[
        str | None,
        Form(
            max_length=MAX_NAME_LENGTH,
            description="The new library's name; default: the archive's.",
        ),
    ] = None,
) -> MoveOut:
    """Import an archive into a new library of the caller's (they are its owner). The whole
    archive is checked first: one this Bunko cannot read or trust is refused (400) before
    anything is made. Its members are added by username (unknown names are reported);
    conversations only when an admin imports. Poll GET /libraries/import/{import_id}."""
    moves = moves_of(services)
    user_id = _person(principal)
    if (file is None) == (upload is None):
        raise ValidationError("send the archive as `file`, or name its signed `upload`")
    if upload is not None and not moves.uploaded_by(upload, user_id):
        raise NotFoundError("no such upload")
    path: Path | None = None
    try:
        if upload is not None:
            path = await anyio.to_thread.run_sync(moves.archives.fetch, upload)
        else:
            assert file is not None
            path = moves.spool_file()
            await _spool(file, path)
    except BaseException:
        if upload is None and path is not None:
            moves.discard(path)
        raise
    try:
        manifest = await anyio.to_thread.run_sync(moves.check, path)
        wanted = name or str(manifest["library"].get("name") or "")
        library = await anyio.to_thread.run_sync(accounts.libraries.create, principal, wanted)
    except BaseException:
        moves.discard(path)
        if upload is not None:  # refused: nothing of it is kept
            await anyio.to_thread.run_sync(moves.archives.delete, upload)
        raise
    job = await anyio.to_thread.run_sync(
        lambda: moves.start_import(
            path,
            workspace_id=library.id,
            name=library.name,
            by=user_id,
            with_people=principal.is_admin,
            kept=upload,
        )
    )
    return MoveOut.of(job, moves)


async def _spool(file: UploadFile, path: Path) -> None:
    """The upload onto disk, a block at a time (the body's size is bounded before this)."""
    with path.open("wb") as out:
        while block := await file.read(_BLOCK):
            await anyio.to_thread.run_sync(out.write, block)


@router.get("/import/{import_id}", response_model=MoveOut, responses=error_responses(404))
def import_status(import_id: str, principal: CurrentPrincipal, services: ServicesDep) -> MoveOut:
    """An import's progress (for the person who started it): importing, then indexing; once
    done, what it did."""
    moves = moves_of(services)
    return MoveOut.of(moves.imported(principal.user_id, import_id), moves)
