"""The ingest queue: in-process locally, SQS on AWS."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class IngestJob:
    workspace_id: str
    document_id: str
    revision: int
    # "precise" also reads page images (OCR); "fast" extracts the text a file carries.
    mode: str = "fast"


class IngestQueue(Protocol):
    def enqueue(self, job: IngestJob) -> None: ...
