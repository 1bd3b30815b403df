"""Which files Bunko can read: extension ↔ MIME type, and sniffing when the name says nothing."""

from __future__ import annotations

import io
import json
import mimetypes
import zipfile
from pathlib import PurePosixPath

from bunko.errors import ParseError

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
HTML = "text/html"
CSV = "text/csv"
TSV = "text/tab-separated-values"
JSON = "application/json"
MARKDOWN = "text/markdown"
PLAIN = "text/plain"
OCTET_STREAM = "application/octet-stream"

SUPPORTED_MIME_TYPES: dict[str, str] = {
    ".txt": PLAIN,
    ".text": PLAIN,
    ".log": PLAIN,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".csv": CSV,
    ".tsv": TSV,
    ".json": JSON,
    ".pdf": PDF,
    ".docx": DOCX,
    ".pptx": PPTX,
    ".xlsx": XLSX,
}

# Other names clients send for the same formats.
_ALIASES = {
    "text/x-markdown": MARKDOWN,
    "application/xhtml+xml": HTML,
    "application/csv": CSV,
    "text/x-csv": CSV,
    "text/json": JSON,
    "application/x-pdf": PDF,
}
_SUPPORTED = frozenset(SUPPORTED_MIME_TYPES.values())
_OFFICE_PARTS = (
    ("word/document.xml", DOCX),
    ("ppt/presentation.xml", PPTX),
    ("xl/workbook.xml", XLSX),
)


def normalize_mime(mime: str | None) -> str | None:
    """Lower-cased type without parameters, aliases resolved; None for an empty value."""
    if not mime:
        return None
    base = mime.split(";", 1)[0].strip().lower()
    return _ALIASES.get(base, base) or None


def charset_of(mime: str | None) -> str | None:
    """The charset parameter of a Content-Type value, if any."""
    for param in (mime or "").split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return None


def extension_mime(filename: str) -> str | None:
    return SUPPORTED_MIME_TYPES.get(PurePosixPath(filename.replace("\\", "/")).suffix.lower())


def guess_mime(filename: str, data: bytes | None = None) -> str:
    """The MIME type from the extension; else sniffed from ``data``; else a generic guess."""
    found = extension_mime(filename)
    if found is None and data:
        found = sniff(data)
    if found is None:
        found = mimetypes.guess_type(filename, strict=False)[0]
    return found or OCTET_STREAM


def is_supported(filename: str, mime: str | None = None) -> bool:
    """True if Bunko can parse a file of this declared type or this extension."""
    return normalize_mime(mime) in _SUPPORTED or extension_mime(filename) is not None


def sniff(data: bytes) -> str | None:
    """Recognise a supported format from the bytes alone, or None."""
    head = data[:1024]
    if b"%PDF-" in head:
        return PDF
    if head.startswith(b"PK\x03\x04"):
        return _office_type(data)
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # binary (UTF-16 text without a BOM is left to the caller's extension)
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype html", b"<html")) or b"<body" in head.lower():
        return HTML
    if start[:1] in (b"{", b"["):
        try:
            json.loads(data)
        except ValueError:
            pass
        else:
            return JSON
    return PLAIN if _looks_textual(data) else None


def _office_type(data: bytes) -> str | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    return next((mime for part, mime in _OFFICE_PARTS if part in names), None)


def _looks_textual(data: bytes) -> bool:
    from bunko.parsing.text import decode  # imported late: mime stays free of parser imports

    try:
        decode(data[:65536], None)
    except ParseError:
        return False
    return True
