"""Turn uploaded bytes into text: pick the parser by MIME type, normalise, report pages.

    >>> doc = parse(b"Hello.", filename="a.txt")
    >>> doc.text, doc.pages
    ('Hello.', [])

Every failure is a bunko.errors error with a short message: UnsupportedMediaError for a
type Bunko cannot read, ParseError for an empty, corrupt, encrypted or text-less file.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any

from bunko.errors import BunkoError, ParseError, UnsupportedMediaError
from bunko.parsing import mime as m
from bunko.parsing.document import ParsedDocument, reason
from bunko.parsing.mime import SUPPORTED_MIME_TYPES, guess_mime, is_supported, normalize_mime

__all__ = [
    "SUPPORTED_MIME_TYPES",
    "ParsedDocument",
    "guess_mime",
    "is_supported",
    "parse",
    "resolve_mime",
]

log = logging.getLogger(__name__)

Parser = Callable[[bytes, str | None], ParsedDocument]


def _lazy(module: str, name: str, *, binary: bool = False, **options: Any) -> Parser:
    """The parser, imported on first use: its library (pypdf, openpyxl, python-pptx, lxml,
    BeautifulSoup) is paid for by the first file of its type, not by every cold start."""

    def run(data: bytes, charset: str | None) -> ParsedDocument:
        parser = getattr(importlib.import_module(f"bunko.parsing.{module}"), name)
        return parser(data, **options) if binary else parser(data, charset, **options)

    return run


# Each parser takes the bytes and the declared charset (binary formats ignore it).
_PARSERS: dict[str, Parser] = {
    m.PLAIN: _lazy("text", "parse_plain"),
    m.MARKDOWN: _lazy("text", "parse_plain"),
    m.HTML: _lazy("html", "parse_html"),
    m.CSV: _lazy("text", "parse_csv"),
    m.TSV: _lazy("text", "parse_csv", delimiter="\t"),
    m.JSON: _lazy("text", "parse_json"),
    m.PDF: _lazy("pdf", "parse_pdf", binary=True),
    m.DOCX: _lazy("office", "parse_docx", binary=True),
    m.PPTX: _lazy("slides", "parse_pptx", binary=True),
    m.XLSX: _lazy("sheets", "parse_xlsx", binary=True),
}
_LABELS = {m.PDF: "PDF", m.DOCX: "DOCX", m.PPTX: "PPTX", m.XLSX: "XLSX", m.HTML: "HTML"}


def resolve_mime(filename: str, data: bytes | None = None, mime: str | None = None) -> str:
    """The type parse() will use: the declared one if Bunko reads it, else guess_mime()."""
    declared = normalize_mime(mime)
    return declared if declared in _PARSERS else guess_mime(filename, data)


def parse(
    data: bytes, *, filename: str, mime: str | None = None, mode: str = "fast"
) -> ParsedDocument:
    """Extract the text of a file. ``mime`` (a Content-Type, parameters allowed) wins over
    the extension when Bunko supports it; a charset parameter is tried first for text.
    ``mode`` "precise" also OCRs PDF pages that are images.
    """
    resolved = resolve_mime(filename, data, mime)
    parser = _PARSERS.get(resolved)
    if parser is None:
        raise UnsupportedMediaError(f"unsupported file type {resolved} ({filename})")
    if not data:
        raise ParseError("empty file")
    try:
        if resolved == m.PDF:  # the one parser with a mode (imported lazily, as all are)
            from bunko.parsing.pdf import parse_pdf

            return parse_pdf(data, precise=mode == "precise")
        return parser(data, m.charset_of(mime))
    except BunkoError:
        raise
    except Exception as exc:  # whatever a library still lets through: never a crash
        log.warning("parsing %s as %s failed", filename, resolved, exc_info=True)
        kind = _LABELS.get(resolved, resolved)
        raise ParseError(f"could not read the {kind} file: {reason(exc)}") from exc
