"""Precise mode: OCR of PDF pages that carry no text (scans), locally with Tesseract.

Pages are rendered by PDFium (pypdfium2, which ships its binary) and read by Tesseract
(Debian's `tesseract-ocr` with the `jpn` and `eng` data, through pytesseract), so nothing
leaves the machine and nothing downloads at run time. Tesseract separates Japanese
characters with spaces; those are removed, so the keyword index sees running text.
"""

from __future__ import annotations

import io
import logging

import regex

from bunko.errors import ParseError

log = logging.getLogger(__name__)

DPI = 300  # Tesseract's recommended resolution for body text
LANGUAGES = "jpn+eng"
# Page segmentation 4, one column of text of varying sizes: automatic layout analysis (3)
# dropped whole lines of large Japanese type in the tests; 4 reads them.
CONFIG = "--psm 4"
# A space between two CJK characters is an OCR artefact, never a word break in Japanese.
_CJK_GAP = regex.compile(
    r"(?<=[\p{Han}\p{Hiragana}\p{Katakana}ー、。])[ \t]+(?=[\p{Han}\p{Hiragana}\p{Katakana}ー、。])"
)


def ocr_available() -> str | None:
    """None when OCR can run here, else what is missing."""
    try:
        import pypdfium2  # noqa: F401
        import pytesseract
    except ImportError as exc:
        return f"the Python package {exc.name} is not installed"
    try:
        languages = set(pytesseract.get_languages(config=""))
    except Exception:
        return "Tesseract is not installed (Debian: tesseract-ocr tesseract-ocr-jpn)"
    missing = {"jpn", "eng"} - languages
    return f"Tesseract lacks the {', '.join(sorted(missing))} data" if missing else None


def ocr_pdf_pages(data: bytes, page_numbers: list[int]) -> dict[int, str]:
    """The OCR'd text of the given 1-based pages."""
    problem = ocr_available()
    if problem:
        raise ParseError(f"precise mode cannot read page images: {problem}")
    import pypdfium2
    import pytesseract

    out: dict[int, str] = {}
    pdf = pypdfium2.PdfDocument(io.BytesIO(data))
    try:
        for number in page_numbers:
            page = pdf[number - 1]
            image = page.render(scale=DPI / 72).to_pil()
            text = pytesseract.image_to_string(image, lang=LANGUAGES, config=CONFIG)
            out[number] = _CJK_GAP.sub("", text)
            page.close()
    finally:
        pdf.close()
    return out
