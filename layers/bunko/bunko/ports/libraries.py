"""Shared libraries and their members (domain/libraries)."""

from __future__ import annotations

from typing import Protocol

from bunko.domain.libraries import Library, Membership, Role


class LibraryStore(Protocol):
    def add_library(self, library: Library, owner: str | None) -> None:
        """Store a library (and `owner` as its owner, in the same write); ConflictError
        when a library of that name (domain/libraries.name_key) exists."""

    def get_library(self, library_id: str) -> Library | None: ...
    def get_library_by_name(self, name: str) -> Library | None: ...
    def delete_library(self, library_id: str) -> bool:
        """The library, its name and its memberships; False if absent."""

    def set_member(self, library_id: str, user_id: str, role: Role) -> None: ...
    def remove_member(self, library_id: str, user_id: str) -> bool: ...
    def members(self, library_id: str) -> list[Membership]: ...
    def role_of(self, library_id: str, user_id: str) -> Role | None: ...
    def memberships(self, user_id: str) -> list[tuple[Library, Role]]:
        """The libraries `user_id` belongs to, by name."""

    def forget_user(self, user_id: str) -> int:
        """Remove the user from every library (a deleted user); how many."""
