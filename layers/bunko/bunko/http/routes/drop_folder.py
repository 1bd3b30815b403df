"""/drop-folder (Bunko, embedded server): which library the drop folder fills, and an admin's
choice of it. The library page says "fed by the drop folder" from this; the CLI's
`--library` default follows the same choice."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, Field

from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.domain.libraries import MAX_NAME_LENGTH
from bunko.errors import ServiceUnavailableError
from bunko.http.deps import AccountsDep, Admin, Reader, ServicesDep
from bunko.http.errors import error_responses

router = APIRouter(prefix="/drop-folder", tags=["drop-folder"], responses=error_responses(401, 403))


class DropFolder(BaseModel):
    available: bool  # this server has a drop folder (the embedded shape)
    feedsThisLibrary: bool  # it fills the library the request works in
    libraryId: str | None = None  # the library it fills: told to admins only


class DropFolderChoice(BaseModel):
    library: Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH)]  # id or name


def _state(services: ServicesDep, accounts: AccountsDep, workspace_id: str, admin: bool):
    available = services.settings.backend == "local"
    target = accounts.workspace_settings.drop_library(DEFAULT_WORKSPACE_ID)
    return DropFolder(
        available=available,
        feedsThisLibrary=available and target == workspace_id,
        libraryId=target if admin and available else None,
    )


@router.get("", response_model=DropFolder)
def drop_folder(principal: Reader, services: ServicesDep, accounts: AccountsDep) -> DropFolder:
    """Whether the drop folder fills the library this request works in."""
    return _state(services, accounts, principal.workspace_id, principal.is_admin)


@router.put("", response_model=DropFolder, responses=error_responses(400, 404, 503))
def point_drop_folder(
    body: DropFolderChoice, principal: Admin, services: ServicesDep, accounts: AccountsDep
) -> DropFolder:
    """Admins: make the drop folder fill one of their libraries (by id or name). Files
    dropped from then on go there; files dropped earlier stay where they are."""
    if services.settings.backend != "local":
        raise ServiceUnavailableError("the drop folder is the embedded server's (bunko serve)")
    own = replace(principal, role=None)
    chosen = accounts.libraries.enter(own, body.library).workspace_id
    accounts.workspace_settings.point_drop_folder(chosen)
    return _state(services, accounts, principal.workspace_id, True)
