"""Turn uploaded bytes into text: pick the parser by MIME type, normalise, report pages.

    >>> doc = parse(b"Hello.", filename="a.txt")
    >>> doc.text, doc.pages
    ('Hello.', [])

Every failure is a bunko.errors error with a short message: UnsupportedMediaError for a
type Bunko cannot read, ParseError for an empty, corrupt, encrypted or text-less file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bunko.errors import BunkoError, ParseError, UnsupportedMediaError
from bunko.parsing import mime as m
from bunko.parsing.document import ParsedDocument, reason
from bunko.parsing.html import parse_html
from bunko.parsing.mime import SUPPORTED_MIME_TYPES, guess_mime, is_supported, normalize_mime
from bunko.parsing.office import parse_docx
from bunko.parsing.pdf import parse_pdf
from bunko.parsing.sheets import parse_xlsx
from bunko.parsing.slides import parse_pptx
from bunko.parsing.text import parse_csv, parse_json, parse_plain

__all__ = [
    "SUPPORTED_MIME_TYPES",
    "ParsedDocument",
    "guess_mime",
    "is_supported",
    "parse",
    "resolve_mime",
]

log = logging.getLogger(__name__)

# Each parser takes the bytes and the declared charset (binary formats ignore it).
_PARSERS: dict[str, Callable[[bytes, str | None], ParsedDocument]] = {
    m.PLAIN: parse_plain,
    m.MARKDOWN: parse_plain,
    m.HTML: parse_html,
    m.CSV: parse_csv,
    m.TSV: lambda data, charset: parse_csv(data, charset, delimiter="\t"),
    m.JSON: parse_json,
    m.PDF: lambda data, _charset: parse_pdf(data),
    m.DOCX: lambda data, _charset: parse_docx(data),
    m.PPTX: lambda data, _charset: parse_pptx(data),
    m.XLSX: lambda data, _charset: parse_xlsx(data),
}
_LABELS = {m.PDF: "PDF", m.DOCX: "DOCX", m.PPTX: "PPTX", m.XLSX: "XLSX", m.HTML: "HTML"}


def resolve_mime(filename: str, data: bytes | None = None, mime: str | None = None) -> str:
    """The type parse() will use: the declared one if Bunko reads it, else guess_mime()."""
    declared = normalize_mime(mime)
    return declared if declared in _PARSERS else guess_mime(filename, data)


def parse(data: bytes, *, filename: str, mime: str | None = None) -> ParsedDocument:
    """Extract the text of a file. ``mime`` (a Content-Type, parameters allowed) wins over
    the extension when Bunko supports it; a charset parameter is tried first for text.
    """
    resolved = resolve_mime(filename, data, mime)
    parser = _PARSERS.get(resolved)
    if parser is None:
        raise UnsupportedMediaError(f"unsupported file type {resolved} ({filename})")
    if not data:
        raise ParseError("empty file")
    try:
        return parser(data, m.charset_of(mime))
    except BunkoError:
        raise
    except Exception as exc:  # whatever a library still lets through: never a crash
        log.warning("parsing %s as %s failed", filename, resolved, exc_info=True)
        kind = _LABELS.get(resolved, resolved)
        raise ParseError(f"could not read the {kind} file: {reason(exc)}") from exc
