"""A real multi-page PDF laid out line by line, as a word processor lays out a report: a title
in large type, headings, paragraphs apart by a gap, and sentences that run over line breaks
(issue 31). `LIGHTHOUSE_REPORT` is five pages; its budget figures are on page 4.

    data = make_report_pdf(LIGHTHOUSE_REPORT)

A page is a list of (type size in points, line); an empty line is a paragraph gap.
"""

from __future__ import annotations

from collections.abc import Sequence

from fpdf import FPDF

from tests.fixtures_files import cjk_font

Page = Sequence[tuple[float, str]]
BODY = 11.0
TITLE = 20.0
HEADING = 14.0

LIGHTHOUSE_REPORT: list[Page] = [
    [
        (TITLE, "Harbor Point Lighthouse"),
        (HEADING, "Restoration Report 2024"),
        (BODY, ""),
        (BODY, "This report describes the restoration of the Harbor Point lighthouse between"),
        (BODY, "March and October 2024. It was prepared for the town council and for the"),
        (BODY, "Maritime Heritage Fund."),
    ],
    [
        (HEADING, "History"),
        (BODY, "The lighthouse was built in 1871 by the engineer Thomas Stevenson, who designed"),
        (BODY, "its cast-iron lantern and the well-"),
        (BODY, "known spiral stair that visitors climb today. Dr. Margaret Reid surveyed the"),
        (BODY, "tower in 1998 and found that 3.5 million litres of water had entered its base."),
    ],
    [
        (HEADING, "Works"),
        (BODY, "The masonry was repointed and the lantern glazing was replaced. A careful exam-"),
        (BODY, "ination of the stair found no cracks, e.g. in the landings or the handrail."),
    ],
    [
        (HEADING, "Budget and costs"),
        (BODY, "The total budget for the restoration was $480,000, of which $312,500 was spent"),
        (BODY, "on the lantern and the masonry. A grant of"),
        (BODY, "$120,000 came from the Maritime Heritage Fund; the rest was paid by the town"),
        (BODY, "council."),
    ],
    [
        (HEADING, "Next steps"),
        (BODY, "The lighthouse reopens to visitors in May 2025, with a small museum of the"),
        (BODY, "keepers' logbooks in the former oil store."),
    ],
]


def make_report_pdf(pages: Sequence[Page]) -> bytes:
    pdf = FPDF()
    font = "Helvetica"
    if not all(text.isascii() for page in pages for _, text in page):
        path = cjk_font()
        if path is None:
            raise LookupError("no font with Japanese glyphs found for the PDF")
        pdf.add_font("cjk", fname=str(path))
        font = "cjk"
    for page in pages:
        pdf.add_page()
        for size, text in page:
            pdf.set_font(font, size=size)
            if text:
                pdf.cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
            else:
                pdf.ln(size * 0.6)
    return bytes(pdf.output())
