"""The files the page-citation tests upload: a five-page PDF report (the budget on page 4),
a three-slide deck and a two-sheet workbook."""

from __future__ import annotations

from tests.fixtures_files import make_pptx, make_xlsx
from tests.report_pdf import LIGHTHOUSE_REPORT, make_report_pdf

REPORT = make_report_pdf(LIGHTHOUSE_REPORT)  # five pages; the budget is on page 4
SLIDES = make_pptx([
    ("Quarterly review", "Agenda for the quarterly review of the ferry service.", None),
    ("Passengers", "The ferry carried 41,000 passengers in the spring quarter.", None),
    ("Fleet", "The ferry Aurora was repainted in dark green during the winter refit.", None),
])  # fmt: skip
SHEET = make_xlsx({
    "Summary": [["Region", "Status"], ["North", "open"], ["South", "open"]],
    "Managers": [["Region", "Manager"], ["Tallinn warehouse", "Kadri Tamm"]],
})  # fmt: skip
