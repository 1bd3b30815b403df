"""aurak's /users: user management for admins (global: every workspace's users)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel

from bunko.domain.accounts import OPERATOR
from bunko.http.deps import AccountsDep, Admin
from bunko.http.errors import error_responses
from bunko.operations.aurak import PASSWORD_FIELD, USERNAME_FIELD, Deleted, UserPublic

router = APIRouter(prefix="/users", tags=["users"], responses=error_responses(401, 403))


class UserCreate(BaseModel):
    username: Annotated[str, USERNAME_FIELD]
    password: Annotated[str, PASSWORD_FIELD]
    isAdmin: bool = False


class LibraryRole(BaseModel):
    name: str
    role: str


class UserListed(UserPublic):
    documents: int  # in the user's personal library (Bunko)
    bytes: int  # their originals' total size (Bunko)
    libraries: list[LibraryRole]  # the shared libraries they belong to (Bunko)


class RoleChange(BaseModel):
    isAdmin: bool


class PasswordReset(BaseModel):
    password: Annotated[str, PASSWORD_FIELD]


@router.get("", response_model=list[UserListed])
def list_users(_: Admin, accounts: AccountsDep) -> list[UserListed]:
    """Every user, oldest first, with the documents and bytes in their own library and the
    shared libraries they belong to."""
    listed = []
    for user in accounts.users.list_users():
        documents, size = accounts.users.usage(user)
        shared = [LibraryRole(name=n, role=r) for n, r in accounts.users.shared_libraries(user)]
        public = UserPublic.of(user).model_dump()
        listed.append(UserListed(**public, documents=documents, bytes=size, libraries=shared))
    return listed


@router.post("", status_code=201, response_model=UserPublic, responses=error_responses(400, 409))
def create_user(body: UserCreate, _: Admin, accounts: AccountsDep) -> UserPublic:
    user = accounts.users.create_user(body.username, body.password, is_admin=body.isAdmin)
    return UserPublic.of(user)


@router.patch("/{user_id}", response_model=UserPublic, responses=error_responses(400, 404, 409))
def change_role(user_id: str, body: RoleChange, _: Admin, accounts: AccountsDep) -> UserPublic:
    """Promote (`isAdmin: true`) or demote a user; the last admin stays (409)."""
    return UserPublic.of(accounts.users.set_admin(user_id, body.isAdmin))


@router.post("/{user_id}/password", response_model=UserPublic, responses=error_responses(400, 404))
def reset_password(
    user_id: str, body: PasswordReset, _: Admin, accounts: AccountsDep
) -> UserPublic:
    """Set a new password for a user who lost theirs; every session they had ends."""
    return UserPublic.of(accounts.users.reset_password(user_id, body.password))


@router.delete("/{user_id}", response_model=Deleted, responses=error_responses(404, 409))
def delete_user(user_id: str, principal: Admin, accounts: AccountsDep) -> Deleted:
    """Delete a user and everything in their workspace; the last admin stays (409). A shared
    library they were the last owner of passes to its first editor, else to the admin
    deleting them."""
    maker = principal.key_maker if principal.key_maker != OPERATOR else None
    admin = principal.user_id or maker  # an admin's key acts for its maker
    user = accounts.users.delete_user(user_id, by=admin)
    return Deleted(message=f"User {user.username} deleted", id=user.id)
