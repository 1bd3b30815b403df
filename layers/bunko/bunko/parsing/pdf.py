"""PDF: the text of each page, with page spans, via pypdf; paragraphs kept apart and the
lines the page layout broke joined back into sentences (parsing/pdf_text)."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader

from bunko.errors import ParseError
from bunko.parsing.document import ParsedDocument, from_pages, invalid
from bunko.parsing.pdf_text import PageLine, join_pages, page_lines

log = logging.getLogger(__name__)


# The fast-mode error for a PDF of page images; the vision advisor keys on "no text".
NO_TEXT = (
    "no text found in the PDF file: its pages are images (a scan). Upload it again with "
    "mode=precise to read them with OCR"
)


def parse_pdf(data: bytes, *, precise: bool = False) -> ParsedDocument:
    """Each page's text layer; with `precise`, pages without one are OCR'd (parsing/ocr)."""
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
    texts: list[tuple[int, str, list[PageLine] | None]] = []
    failed = 0
    for number in range(1, count + 1):
        try:
            texts.append((number, *page_lines(pages[number - 1])))
        except Exception as exc:
            # One damaged page should not cost the reader the rest of the document.
            failed += 1
            log.warning("pdf page %d unreadable: %s", number, exc)
    if failed == count and count:
        raise invalid("PDF", "no page could be read")
    if precise:
        from bunko.parsing.ocr import ocr_pdf_pages

        blank = [number for number, text, _ in texts if not text.strip()]
        if blank:
            read = ocr_pdf_pages(data, blank)
            texts = [
                (number, read[number], None) if number in read else (number, text, lines)
                for number, text, lines in texts
            ]
    if not any(text.strip() for _, text, _ in texts):
        raise ParseError(NO_TEXT if not precise else "no text found in the PDF file, even by OCR")
    return from_pages(join_pages(texts), "PDF")


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
