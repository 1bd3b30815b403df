"""Direct uploads: a signed URL a client PUTs a large file to (S3 presigned PUT on AWS)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class SignedUpload:
    url: str
    key: str
    method: str = "PUT"
    headers: dict[str, str] = field(default_factory=dict)
    expires_in: int = 900


@dataclass(frozen=True)
class DropOptions:
    """How a directly uploaded file is indexed: /upload's `category`, `chunkSize`,
    `chunkOverlap` and `mode`, carried with the object to its ingest (None: the default)."""

    category: str | None = None
    chunk_size: int | None = None
    chunk_overlap: int | None = None
    mode: str | None = None
    # Checked metadata (domain/metadata.check_metadata) for the file, or None.
    metadata: dict[str, str | float | list[str]] | None = None
    # A person's (or agent's) upload through a signed URL, admitted when signed: its ingest
    # checks the storage quota again (not the pace) and deletes the object it refuses.
    presigned: bool = False


class UploadSigner(Protocol):
    def sign_upload(
        self,
        *,
        workspace_id: str,
        path: str,
        content_type: str | None,
        size: int,
        options: DropOptions,
    ) -> SignedUpload:
        """A URL that ingests the PUT file at `path` in `workspace_id` with `options` once it
        arrives, and takes a body of exactly `size` bytes and no other; ValidationError for a
        path whose upload could not be ingested there."""
