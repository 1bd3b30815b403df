"""ConversionService: office documents → PDF through a DocumentConverter (LibreOffice),
with the PDF kept in the caller's workspace for download; plus the converter's health.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import PurePosixPath

from bunko.domain import new_id
from bunko.errors import (
    NotFoundError,
    PayloadTooLargeError,
    ServiceUnavailableError,
    UnsupportedMediaError,
    ValidationError,
)
from bunko.ports import BlobStore, DocumentConverter
from bunko.services.bounds import check_name

SERVICE_NAME = "libreoffice-converter"
OFFICE_SUFFIXES = frozenset(
    {".doc", ".docx", ".odt", ".rtf", ".ppt", ".pptx", ".odp", ".xls", ".xlsx", ".ods"}
)


def pdf_key(workspace_id: str, conversion_id: str) -> str:
    return f"conversions/{workspace_id}/{conversion_id}.pdf"


@dataclass(frozen=True)
class Conversion:
    id: str
    original: str
    file_size: int  # of the PDF, in bytes


class ConversionService:
    def __init__(
        self, converter: DocumentConverter, blobs: BlobStore, *, max_file_bytes: int
    ) -> None:
        self.converter = converter
        self.blobs = blobs
        self.max_file_bytes = max_file_bytes
        self._started = time.monotonic()

    def health(self) -> dict:
        """Status, versions and uptime; ServiceUnavailableError when LibreOffice is absent."""
        if not self.converter.available():
            raise ServiceUnavailableError("LibreOffice is not installed: soffice was not found")
        return {
            "status": "healthy",
            "service": SERVICE_NAME,
            "version": self.converter.version() or "unknown",
            "uptime": round(time.monotonic() - self._started, 1),
        }

    def convert(self, workspace_id: str, *, filename: str, data: bytes) -> Conversion:
        name = check_name(PurePosixPath(filename.replace("\\", "/")).name, field="file name")
        if PurePosixPath(name).suffix.lower() not in OFFICE_SUFFIXES:
            raise UnsupportedMediaError(
                f"cannot convert {name or 'this file'}: send one of "
                + ", ".join(sorted(OFFICE_SUFFIXES))
            )
        if not data:
            raise ValidationError("file: empty")
        if len(data) > self.max_file_bytes:
            raise PayloadTooLargeError(
                f"file is {len(data)} bytes; the limit is {self.max_file_bytes} bytes"
            )
        pdf = self.converter.convert_to_pdf(data, name)
        conversion = Conversion(id=new_id(), original=name, file_size=len(pdf))
        self.blobs.put(pdf_key(workspace_id, conversion.id), pdf, content_type="application/pdf")
        return conversion

    def get_pdf(self, workspace_id: str, conversion_id: str) -> bytes:
        try:
            uuid.UUID(conversion_id)
        except ValueError as exc:
            raise NotFoundError(f"conversion {conversion_id} not found") from exc
        key = pdf_key(workspace_id, conversion_id)
        if not self.blobs.exists(key):
            raise NotFoundError(f"conversion {conversion_id} not found")
        return self.blobs.get(key)
