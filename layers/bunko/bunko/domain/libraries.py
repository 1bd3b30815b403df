"""Libraries: the unit a team shares. A library is a workspace with members, each with a role:
a viewer searches and chats, an editor also uploads and deletes, an owner also manages the
members. Every user has a personal library (their own workspace, theirs alone); the
installation's default library (where the drop folder, `bunko ingest` and the stdio MCP
server put files) belongs to the installation's admins."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bunko.domain.documents import utcnow
from bunko.domain.lookalikes import lookalike_key

Role = Literal["viewer", "editor", "owner"]
ROLES: tuple[Role, ...] = ("viewer", "editor", "owner")  # what each may do: domain/auth
MAX_NAME_LENGTH = 64


@dataclass
class Library:
    id: str  # its workspace's id
    name: str
    created_by: str | None = None  # a user id; None for the installation's default library
    created_at: datetime = field(default_factory=utcnow)


@dataclass(frozen=True)
class Membership:
    library_id: str
    user_id: str
    role: Role


def name_key(name: str) -> str:
    """Two names that read alike are one name: NFKC, case folded, spaces collapsed, and
    letters that pass for ASCII ones taken as them (a Cyrillic `Теаm` is `team`;
    domain/lookalikes). The stores keep one library per key."""
    return lookalike_key(name)
