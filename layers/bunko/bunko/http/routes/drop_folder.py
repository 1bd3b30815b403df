"""/drop-folder: which libraries the drop folder fills, and an admin's choice of them.

The whole folder fills one library; an admin may point any sub-folder of it at another
(services/settings/drop_routes.py). On the embedded server the folder is drop/ in the data
folder; on AWS it is the bucket's drop prefix, whose first key segment plays the sub-folder.
The library page says "fed by the drop folder" (or by which sub-folder) from this; the CLI's
`--library` default follows the folder's library."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.domain.drop_routes import MAX_SUBFOLDER_LENGTH
from bunko.domain.libraries import MAX_NAME_LENGTH
from bunko.http.deps import AccountsDep, Admin, Reader, ServicesDep
from bunko.http.errors import error_responses

router = APIRouter(tags=["drop-folder"], responses=error_responses(401, 403))


class DropSubfolder(BaseModel):
    name: str
    libraryId: str


class DropFolder(BaseModel):
    available: bool  # this server takes drops (always: a folder, or the bucket's prefix)
    kind: Literal["folder", "bucket"]  # drop/ in the data folder, or the S3 drop prefix
    feedsThisLibrary: bool  # the folder (outside mapped sub-folders) fills this library
    subfoldersHere: list[str] = []  # the sub-folders that fill this library
    libraryId: str | None = None  # the library the folder fills: told to admins only
    subfolders: list[DropSubfolder] = []  # every mapped sub-folder: told to admins only


class DropFolderChoice(BaseModel):
    library: Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH)]  # id or name
    # None: the whole folder; a name: that sub-folder of it (created if missing)
    subfolder: Annotated[str | None, Field(min_length=1, max_length=MAX_SUBFOLDER_LENGTH)] = None


def _state(services: ServicesDep, accounts: AccountsDep, workspace_id: str, admin: bool):
    routes = accounts.workspace_settings.drop_routes()
    target = routes.folder_library(DEFAULT_WORKSPACE_ID)
    return DropFolder(
        available=True,
        kind="folder" if services.settings.backend == "local" else "bucket",
        feedsThisLibrary=target == workspace_id,
        subfoldersHere=sorted(n for n, w in routes.subfolders.items() if w == workspace_id),
        libraryId=target if admin else None,
        subfolders=[
            DropSubfolder(name=n, libraryId=w) for n, w in sorted(routes.subfolders.items())
        ]
        if admin
        else [],
    )


@router.get("/drop-folder", response_model=DropFolder)
def drop_folder(principal: Reader, services: ServicesDep, accounts: AccountsDep) -> DropFolder:
    """What of the drop folder fills the library this request works in."""
    return _state(services, accounts, principal.workspace_id, principal.is_admin)


@router.put("/drop-folder", response_model=DropFolder, responses=error_responses(400, 404))
def point_drop_folder(
    body: DropFolderChoice, principal: Admin, services: ServicesDep, accounts: AccountsDep
) -> DropFolder:
    """Admins: make the drop folder, or one sub-folder of it, fill one of their libraries (by
    id or name). Files dropped from then on go there; when the whole folder moves, files
    dropped earlier stay where they are; a sub-folder's files move with it."""
    own = replace(principal, role=None)
    chosen = accounts.libraries.enter(own, body.library).workspace_id
    if body.subfolder is None:
        accounts.workspace_settings.point_drop_folder(chosen)
    else:
        accounts.workspace_settings.point_drop_subfolder(body.subfolder, chosen)
    return _state(services, accounts, principal.workspace_id, True)


@router.delete(
    "/drop-folder/subfolders/{subfolder}", response_model=DropFolder, responses=error_responses(400)
)
def unmap_drop_subfolder(
    subfolder: Annotated[str, Path(min_length=1, max_length=MAX_SUBFOLDER_LENGTH)],
    principal: Admin,
    services: ServicesDep,
    accounts: AccountsDep,
) -> DropFolder:
    """Admins: the sub-folder fills the folder's library again (which takes its files; the
    library it filled keeps what it had)."""
    accounts.workspace_settings.point_drop_subfolder(subfolder, None)
    return _state(services, accounts, principal.workspace_id, True)
