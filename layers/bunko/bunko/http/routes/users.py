"""aurak's /users: user management for admins (global: every workspace's users)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel

from bunko.http.deps import AccountsDep, Admin
from bunko.http.errors import error_responses
from bunko.http.schemas import PASSWORD_FIELD, USERNAME_FIELD, Deleted, UserPublic

router = APIRouter(prefix="/users", tags=["users"], responses=error_responses(401, 403))


class UserCreate(BaseModel):
    username: Annotated[str, USERNAME_FIELD]
    password: Annotated[str, PASSWORD_FIELD]
    isAdmin: bool = False


@router.get("", response_model=list[UserPublic])
def list_users(_: Admin, accounts: AccountsDep) -> list[UserPublic]:
    return [UserPublic.of(u) for u in accounts.users.list_users()]


@router.post("", status_code=201, response_model=UserPublic, responses=error_responses(400, 409))
def create_user(body: UserCreate, _: Admin, accounts: AccountsDep) -> UserPublic:
    user = accounts.users.create_user(body.username, body.password, is_admin=body.isAdmin)
    return UserPublic.of(user)


@router.delete("/{user_id}", response_model=Deleted, responses=error_responses(404, 409))
def delete_user(user_id: str, _: Admin, accounts: AccountsDep) -> Deleted:
    """Delete a user and everything in their workspace; the last admin stays (409)."""
    user = accounts.users.delete_user(user_id)
    return Deleted(message=f"User {user.username} deleted", id=user.id)
