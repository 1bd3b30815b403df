"""Response and request shapes shared by several routers (aurak's field names)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from bunko.domain.accounts import User

# Bounds for the raw input; the services apply the finer rules (and name the field).
USERNAME_FIELD = Field(min_length=1, max_length=64)
PASSWORD_FIELD = Field(min_length=1, max_length=256)


class UserPublic(BaseModel):
    id: str
    username: str
    isAdmin: bool
    createdAt: datetime

    @classmethod
    def of(cls, user: User) -> UserPublic:
        return cls(
            id=user.id, username=user.username, isAdmin=user.is_admin, createdAt=user.created_at
        )


class Message(BaseModel):
    message: str


class Deleted(BaseModel):
    message: str
    id: str
