"""Where agents' API keys are stored (only their hashes)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from bunko.domain.accounts import ApiKey


class ApiKeyStore(Protocol):
    def add(self, key: ApiKey) -> None: ...
    def find_by_hash(self, key_hash: str) -> ApiKey | None: ...
    def get(self, key_id: str) -> ApiKey | None: ...
    def list_keys(self, workspace_id: str | None = None) -> list[ApiKey]: ...
    def revoke(self, key_id: str, when: datetime) -> bool:
        """Mark the key revoked; False if there is no such (unrevoked) key."""
