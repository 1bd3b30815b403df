"""The parser's result, text normalisation, and the error messages every parser shares."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from bunko.errors import ParseError

# Line and paragraph separators become "\n" / "\n\n"; other C0 controls (NUL, ESC, ...) are
# dropped: they carry no text, and stores and JSON handle them badly.
_NEWLINES = re.compile(r"\r\n?|[\x85\u2028\v]")
_PARAGRAPHS = re.compile(r"[\f\u2029]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BLANK_LINES = re.compile(r"\n{3,}")
PAGE_SEPARATOR = "\n\n"
# Empty cells kept in a table's row (a workbook's or a CSV's): a gap of more becomes this
# many. A cell in column XFD would otherwise cost 16,383 tabs a row (a 12 KB file, 33 MB of
# text), and tells search nothing.
MAX_EMPTY_RUN = 8


@dataclass
class ParsedDocument:
    """Extracted text; ``pages`` are (start, end, page_no) spans into it, empty if unpaged.

    Page numbers are 1-based and keep the file's numbering (a page without text has no
    span); the spans are in order and do not overlap.
    """

    text: str
    pages: list[tuple[int, int, int]] = field(default_factory=list)


def normalize_text(text: str) -> str:
    """Unify newlines, drop control characters, trailing spaces and extra blank lines.

    Characters are kept as written (no NFKC): full-width and half-width forms stay distinct.
    """
    text = _PARAGRAPHS.sub("\n\n", _NEWLINES.sub("\n", text))
    text = _CONTROLS.sub("", text)
    # Line by line, not by a regex: `[ \t]+\n` backtracks over a long run of blanks that is
    # not at a line's end (16,000 tabs before a cell) in time squared.
    text = "\n".join(line.rstrip(" \t") for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()


def from_text(text: str, kind: str) -> ParsedDocument:
    text = normalize_text(text)
    if not text:
        raise ParseError(f"no text found in the {kind} file")
    return ParsedDocument(text=text)


def from_pages(pages: Iterable[tuple[int, str]], kind: str) -> ParsedDocument:
    """Join (page_no, text) pages with a blank line, recording each page's span."""
    parts: list[str] = []
    spans: list[tuple[int, int, int]] = []
    offset = 0
    for page_no, raw in pages:
        text = normalize_text(raw)
        if not text:
            continue
        if parts:
            parts.append(PAGE_SEPARATOR)
            offset += len(PAGE_SEPARATOR)
        parts.append(text)
        spans.append((offset, offset + len(text), page_no))
        offset += len(text)
    if not parts:
        raise ParseError(f"no text found in the {kind} file")
    return ParsedDocument(text="".join(parts), pages=spans)


def reason(exc: BaseException) -> str:
    """A one-line, bounded description of a library's exception (never a traceback)."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, KeyError):  # str(KeyError) is the repr of its key
        message = message.strip("\"'")
    return message if len(message) <= 160 else message[:157] + "..."


def invalid(kind: str, exc: BaseException | str) -> ParseError:
    detail = exc if isinstance(exc, str) else reason(exc)
    return ParseError(f"not a valid {kind}: {detail}")
