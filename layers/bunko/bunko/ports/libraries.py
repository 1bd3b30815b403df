"""Shared libraries and their members (domain/libraries)."""

from __future__ import annotations

from typing import Protocol

from bunko.domain.libraries import Library, Membership, Role


class LibraryStore(Protocol):
    def add_library(self, library: Library, owner: str | None) -> None:
        """Store a library (and `owner` as its owner, in the same write); ConflictError
        when a library of that name (domain/libraries.name_key) exists."""

    def get_library(self, library_id: str) -> Library | None: ...
    def list_libraries(self) -> list[Library]:
        """Every shared library (an admin's view), by name."""

    def get_library_by_name(self, name: str) -> Library | None: ...
    def delete_library(self, library_id: str) -> bool:
        """The library, its name and its memberships; False if absent."""

    def set_member(
        self, library_id: str, user_id: str, role: Role, *, keep_an_owner: bool = False
    ) -> None:
        """Add or change a member. With `keep_an_owner`, ConflictError instead of demoting
        the library's last owner, decided in the same atomic step as the write (two owners
        demoting each other at once cannot both succeed)."""

    def remove_member(self, library_id: str, user_id: str, *, keep_an_owner: bool = False) -> bool:
        """Remove a member; False if not one. With `keep_an_owner`, ConflictError instead of
        removing the last owner, atomically (two owners leaving at once: one stays)."""

    def members(self, library_id: str) -> list[Membership]: ...
    def role_of(self, library_id: str, user_id: str) -> Role | None: ...
    def memberships(self, user_id: str) -> list[tuple[Library, Role]]:
        """The libraries `user_id` belongs to, by name."""

    def forget_user(self, user_id: str) -> int:
        """Remove the user from every library (a deleted user); how many."""
