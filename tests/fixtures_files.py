"""Generate real sample files of every format Bunko parses, for tests.

    from tests.fixtures_files import SAMPLE_KINDS, make_file, filename_for
    data = make_file("docx", "Bunko is a small library.")
    parse(data, filename=filename_for("docx"))      # the text comes back out

Paragraphs in ``text`` (separated by blank lines) become paragraphs, cells, slides or PDF
pages where the format has them. PDFs with text beyond Latin-1 (Japanese) need a font with
Japanese glyphs: ``cjk_font()`` finds one (fontconfig, or the IPAex font that
japanize-matplotlib ships) or returns None; tests skip with ``needs_cjk_font``.
"""

from __future__ import annotations

import csv
import html
import io
import json
import shutil
import subprocess
from collections.abc import Sequence
from functools import cache
from importlib import util
from pathlib import Path

import docx
import openpyxl
import pytest
from fpdf import FPDF
from pptx import Presentation
from pptx.util import Inches

SAMPLE_KINDS: tuple[str, ...] = ("txt", "md", "html", "csv", "json", "pdf", "docx", "pptx", "xlsx")
BINARY_KINDS: tuple[str, ...] = ("pdf", "docx", "pptx", "xlsx")


def filename_for(kind: str) -> str:
    return f"sample.{kind}"


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.split("\n\n") if p.strip()]


def make_file(kind: str, text: str) -> bytes:
    """Bytes of a real ``kind`` file (one of SAMPLE_KINDS) whose content is ``text``."""
    parts = paragraphs(text) or [text]
    if kind in ("txt", "md"):
        prefix = "# Sample\n\n" if kind == "md" else ""
        return (prefix + text).encode("utf-8")
    if kind == "html":
        return make_html(parts)
    if kind == "csv":
        return make_csv([["section", "body"], *[[str(i), p] for i, p in enumerate(parts, 1)]])
    if kind == "json":
        return json.dumps({"title": "sample", "sections": parts}, ensure_ascii=False).encode()
    if kind == "pdf":
        return make_pdf(parts)
    if kind == "docx":
        return make_docx(parts)
    if kind == "pptx":
        return make_pptx([(f"Slide {i}", p, None) for i, p in enumerate(parts, 1)])
    if kind == "xlsx":
        return make_xlsx(
            {"Sheet1": [["section", "body"], *[[i, p] for i, p in enumerate(parts, 1)]]}
        )
    raise ValueError(f"unknown sample kind {kind!r}; choose from {SAMPLE_KINDS}")


def make_html(parts: Sequence[str], *, title: str = "Sample") -> bytes:
    body = "\n".join(f"<p>{html.escape(p)}</p>" for p in parts)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>p {{ color: red }}</style>"
        "<script>var hidden = 'not visible';</script></head>"
        f"<body>{body}</body></html>"
    ).encode()


def make_csv(rows: Sequence[Sequence[object]], *, encoding: str = "utf-8") -> bytes:
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    return out.getvalue().encode(encoding)


def make_pdf(pages: Sequence[str]) -> bytes:
    """A PDF with one page of text per item (long text flows onto further pages)."""
    pdf = FPDF()
    if all(_latin1(p) for p in pages):
        pdf.set_font("Helvetica", size=11)
    else:
        font = cjk_font()
        if font is None:
            raise LookupError("no font with Japanese glyphs found for the PDF")
        pdf.add_font("cjk", fname=str(font))
        pdf.set_font("cjk", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def make_docx(parts: Sequence[str], *, table: Sequence[Sequence[str]] | None = None) -> bytes:
    document = docx.Document()
    for i, part in enumerate(parts):
        (document.add_heading if i == 0 and len(parts) > 1 else document.add_paragraph)(part)
    if table:
        grid = document.add_table(rows=len(table), cols=max(len(r) for r in table))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_pptx(slides: Sequence[tuple[str, str, str | None]]) -> bytes:
    """Slides of (title, body, notes or None)."""
    presentation = Presentation()
    layout = presentation.slide_layouts[1]  # title and content
    for title, body, notes in slides:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    # A free text box too: not every slide keeps its text in placeholders.
    if slides:
        box = presentation.slides[0].shapes.add_textbox(Inches(1), Inches(6), Inches(4), Inches(1))
        box.text_frame.text = "textbox"
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def make_xlsx(sheets: dict[str, Sequence[Sequence[object]]]) -> bytes:
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def _latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


@cache
def cjk_font() -> Path | None:
    """A TrueType font with Japanese glyphs, or None."""
    if shutil.which("fc-list"):
        listed = subprocess.run(
            ["fc-list", ":lang=ja", "file"], capture_output=True, text=True, check=False
        ).stdout
        for line in sorted(listed.splitlines()):
            path = Path(line.split(":")[0].strip())
            if path.suffix.lower() == ".ttf" and path.is_file():
                return path
    spec = util.find_spec("japanize_matplotlib")  # ships IPAexGothic
    if spec and spec.origin:
        bundled = Path(spec.origin).parent / "fonts" / "ipaexg.ttf"
        if bundled.is_file():
            return bundled
    return None


needs_cjk_font = pytest.mark.skipif(cjk_font() is None, reason="no font with Japanese glyphs")


def make_zip_bomb(kind: str, inflated_mib: int = 200) -> bytes:
    """A real .docx or .xlsx whose main XML part inflates to `inflated_mib` MiB of ordinary
    paragraphs (rows), written in pieces so the test never holds the inflated part."""
    import io
    import zipfile

    base = make_docx(["seed"]) if kind == "docx" else make_xlsx({"Sheet1": [["seed"]]})
    part = "word/document.xml" if kind == "docx" else "xl/worksheets/sheet1.xml"
    if kind == "docx":
        head = b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
        unit = b"<w:p><w:r><w:t>An ordinary paragraph of a very long report.</w:t></w:r></w:p>"
        tail = b"</w:body></w:document>"
    else:
        head = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        unit = b'<row><c t="inlineStr"><is><t>an ordinary cell of a long sheet</t></is></c></row>'
        tail = b"</sheetData></worksheet>"
    block = unit * (1024 * 1024 // len(unit))
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(base)) as src,
        zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as dst,
    ):
        for item in src.infolist():
            if item.filename != part:
                dst.writestr(item, src.read(item.filename))
        with dst.open(part, "w", force_zip64=True) as f:
            f.write(head)
            for _ in range(inflated_mib):
                f.write(block)
            f.write(tail)
    return out.getvalue()
