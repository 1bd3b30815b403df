"""Ports of the account side: users, login attempts, model configs, settings documents."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from bunko.domain.accounts import LoginAttempts, ModelConfig, User


class UserStore(Protocol):
    def add_user(self, user: User) -> None:
        """Insert; raises ConflictError when the username (by username_key) is taken."""

    def add_first_admin(self, user: User) -> bool:
        """Add `user` as an admin if no admin exists yet, in one atomic step (two first
        sign-ups at once make one admin); False, and nothing added, when one exists.
        ConflictError if it would add and the username is taken."""

    def save_user(self, user: User) -> None: ...
    def get_user(self, user_id: str) -> User | None: ...
    def get_user_by_username(self, username: str) -> User | None: ...
    def list_users(self) -> list[User]:
        """Oldest first."""

    def count_admins(self) -> int: ...
    def delete_user(self, user_id: str) -> bool:
        """Delete; False if absent. Raises ConflictError, atomically, instead of deleting the
        last admin (two concurrent deletes must not leave the server without one)."""


class LoginAttemptStore(Protocol):
    def get_attempts(self, key: str) -> LoginAttempts | None: ...
    def save_attempts(self, attempts: LoginAttempts) -> None: ...
    def clear_attempts(self, key: str) -> None: ...
    def update_attempts(
        self,
        keys: Sequence[str],
        change: Callable[[list[LoginAttempts]], list[LoginAttempts]],
    ) -> None:
        """Read the records of `keys` (a fresh one for an absent key), pass them to `change`
        and write what it returns, atomically: no other update of these keys can come in
        between (so a count cannot be raced). If `change` raises, nothing is written and
        the exception propagates. `change` may be called again on a retry."""


class ModelConfigStore(Protocol):
    def add_model_config(self, config: ModelConfig) -> None:
        """Insert; raises ConflictError when the name is taken in the workspace."""

    def save_model_config(self, config: ModelConfig) -> None:
        """Update; raises ConflictError when the new name is taken in the workspace."""

    def get_model_config(self, workspace_id: str, config_id: str) -> ModelConfig | None: ...
    def list_model_configs(self, workspace_id: str) -> list[ModelConfig]:
        """Oldest first."""

    def delete_model_config(self, workspace_id: str, config_id: str) -> bool: ...
    def delete_workspace_model_configs(self, workspace_id: str) -> int: ...


class SettingsStore(Protocol):
    """JSON settings documents by (scope, owner): "user"/user id, "workspace"/workspace id."""

    def get_settings(self, scope: str, owner: str) -> dict[str, Any] | None: ...
    def get_many_settings(self, scope: str, owners: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The documents of those owners that exist, in one round trip (a page of files)."""

    def put_settings(self, scope: str, owner: str, values: dict[str, Any]) -> None: ...
    def delete_settings(self, scope: str, owner: str) -> None: ...
    def list_settings(self, scope: str) -> list[tuple[str, dict[str, Any]]]: ...
    def take_lease(self, scope: str, owner: str, holder: str, *, now: float, until: float) -> bool:
        """Hold (scope, owner) for `holder` until `until` (seconds since the epoch), in one
        conditional write: False when another holder's lease runs past `now`. A holder
        that crashed never releases it: its lease is taken over once it has expired."""
        ...

    def release_lease(self, scope: str, owner: str, holder: str) -> None:
        """Give the lease back, if `holder` still holds it (not one taken over since)."""
        ...
