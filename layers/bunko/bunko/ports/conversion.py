"""Document conversion (office formats → PDF)."""

from __future__ import annotations

from typing import Protocol


class DocumentConverter(Protocol):
    """Office documents → PDF (LibreOffice locally)."""

    def available(self) -> bool: ...
    def version(self) -> str | None: ...
    def convert_to_pdf(self, data: bytes, filename: str) -> bytes:
        """Raises ParseError when the file cannot be converted, ServiceUnavailableError
        when the converter is missing or timed out."""
