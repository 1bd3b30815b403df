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


class UploadSigner(Protocol):
    def sign_upload(
        self, *, workspace_id: str, path: str, content_type: str | None, category: str | None
    ) -> SignedUpload:
        """A URL that ingests the PUT file at `path` in `workspace_id` once it arrives;
        ValidationError for a path whose upload could not be ingested there."""
