"""Blobs: original files and extracted text."""

from __future__ import annotations

from typing import Protocol


class BlobStore(Protocol):
    """Original files and extracted text. Keys are relative, '/'-separated."""

    def put(self, key: str, data: bytes, *, content_type: str | None = None) -> None: ...
    def get(self, key: str) -> bytes:
        """Raises NotFoundError."""

    def exists(self, key: str) -> bool: ...
    def delete(self, key: str) -> None: ...
    def delete_prefix(self, prefix: str) -> int: ...
