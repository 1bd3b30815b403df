"""PDF: the text of each page, with page spans, via pypdf."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader

from bunko.errors import ParseError
from bunko.parsing.document import ParsedDocument, from_pages, invalid

log = logging.getLogger(__name__)


def parse_pdf(data: bytes) -> ParsedDocument:
    if b"%PDF-" not in data[:1024]:
        raise invalid("PDF", "no %PDF header")
    try:
        reader = PdfReader(io.BytesIO(data))
        _unlock(reader)
        pages = reader.pages
        count = len(pages)
    except ParseError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise invalid("PDF", exc) from exc
    texts: list[tuple[int, str]] = []
    failed = 0
    for number in range(1, count + 1):
        try:
            texts.append((number, pages[number - 1].extract_text() or ""))
        except Exception as exc:
            # One damaged page should not cost the reader the rest of the document.
            failed += 1
            log.warning("pdf page %d unreadable: %s", number, exc)
    if failed == count and count:
        raise invalid("PDF", "no page could be read")
    if not any(text.strip() for _, text in texts):
        raise ParseError(
            "no text found in the PDF file (scanned pages are images and need OCR first)"
        )
    return from_pages(texts, "PDF")


def _unlock(reader: PdfReader) -> None:
    """Open PDFs encrypted with an empty user password (common for 'no copy' PDFs)."""
    if not reader.is_encrypted:
        return
    try:
        unlocked = reader.decrypt("")
    except Exception as exc:
        raise ParseError(f"the PDF file is encrypted and cannot be opened ({exc})") from exc
    if not unlocked:
        raise ParseError("the PDF file is encrypted with a password")
