"""/libraries (Bunko): shared libraries, their members and roles. Which library any other
request works in is named by the `X-Bunko-Library` header (http/deps)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from bunko.domain.libraries import MAX_NAME_LENGTH
from bunko.http.deps import AccountsDep, CurrentPrincipal
from bunko.http.errors import error_responses
from bunko.operations.aurak import USERNAME_FIELD, Deleted
from bunko.services.accounts import LibraryView

router = APIRouter(prefix="/libraries", tags=["libraries"], responses=error_responses(401, 403))

RoleName = Literal["viewer", "editor", "owner"]


class LibraryOut(BaseModel):
    id: str
    name: str
    role: RoleName  # the caller's
    personal: bool  # the caller's own library (the one a request without the header uses)
    createdAt: datetime

    @classmethod
    def of(cls, view: LibraryView) -> LibraryOut:
        lib = view.library
        return cls(
            id=lib.id,
            name=lib.name,
            role=view.role,
            personal=view.personal,
            createdAt=lib.created_at,
        )


class LibraryCreate(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH)]


class MemberOut(BaseModel):
    userId: str
    username: str
    role: RoleName


class MemberSet(BaseModel):
    username: Annotated[str, USERNAME_FIELD]
    role: RoleName


@router.get("", response_model=list[LibraryOut])
def list_libraries(principal: CurrentPrincipal, accounts: AccountsDep) -> list[LibraryOut]:
    """The caller's libraries with their role in each: their own first, then by name."""
    return [LibraryOut.of(v) for v in accounts.libraries.visible(principal)]


class LibraryListed(BaseModel):
    id: str
    name: str
    createdAt: datetime


@router.get("/all", response_model=list[LibraryListed])
def list_every_library(principal: CurrentPrincipal, accounts: AccountsDep) -> list[LibraryListed]:
    """Every shared library, by name, whoever owns it (admins; 403 for anyone else). An admin
    deletes any of them with DELETE /libraries/:id."""
    return [
        LibraryListed(id=lib.id, name=lib.name, createdAt=lib.created_at)
        for lib in accounts.libraries.all_libraries(principal)
    ]


@router.post("", status_code=201, response_model=LibraryOut, responses=error_responses(400, 409))
def create_library(
    body: LibraryCreate, principal: CurrentPrincipal, accounts: AccountsDep
) -> LibraryOut:
    """A new shared library; its creator is its owner. Names are unique (409)."""
    library = accounts.libraries.create(principal, body.name)
    return LibraryOut.of(LibraryView(library, "owner"))


@router.get("/{library_id}/members", response_model=list[MemberOut], responses=error_responses(404))
def list_members(
    library_id: str, principal: CurrentPrincipal, accounts: AccountsDep
) -> list[MemberOut]:
    members = accounts.libraries.members(principal, library_id)
    return [MemberOut(userId=u.id, username=u.username, role=role) for u, role in members]


@router.put(
    "/{library_id}/members", response_model=MemberOut, responses=error_responses(400, 404, 409)
)
def set_member(
    library_id: str, body: MemberSet, principal: CurrentPrincipal, accounts: AccountsDep
) -> MemberOut:
    """Add a user by name with a role, or change their role (owners)."""
    user, role = accounts.libraries.set_member(principal, library_id, body.username, body.role)
    return MemberOut(userId=user.id, username=user.username, role=role)


@router.delete(
    "/{library_id}/members/{user_id}", response_model=Deleted, responses=error_responses(404, 409)
)
def remove_member(
    library_id: str, user_id: str, principal: CurrentPrincipal, accounts: AccountsDep
) -> Deleted:
    """Owners remove a member; any member may remove themselves. The last owner stays."""
    accounts.libraries.remove_member(principal, library_id, user_id)
    return Deleted(message="Member removed", id=user_id)


@router.delete("/{library_id}", response_model=Deleted, responses=error_responses(404, 409))
def delete_library(library_id: str, principal: CurrentPrincipal, accounts: AccountsDep) -> Deleted:
    """Delete a shared library and everything in it (its owners, or an admin)."""
    library = accounts.libraries.delete(principal, library_id)
    return Deleted(message=f"Library {library.name} deleted", id=library.id)
