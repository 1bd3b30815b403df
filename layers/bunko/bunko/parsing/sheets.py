"""Excel workbooks (.xlsx): each sheet's name then its rows; one page per sheet."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterator

import openpyxl

from bunko.errors import ParseError
from bunko.parsing.document import MAX_EMPTY_RUN, ParsedDocument, from_pages, invalid
from bunko.parsing.office import check_package


def parse_xlsx(data: bytes) -> ParsedDocument:
    check_package(data, "XLSX")
    try:
        # read_only streams the rows; data_only gives the values formulas last computed.
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl/zipfile/lxml raise many types for damaged files
        raise invalid("XLSX", exc) from exc
    try:
        pages = []
        budget = _Budget()
        for number, sheet in enumerate(workbook.worksheets, 1):
            # Dimensions written by some producers are wrong; read every row instead. No
            # max_col: openpyxl would pad every row to it (25,000 rows of two cells made
            # 25 million); a row comes as wide as its own last cell and is cut here.
            sheet.reset_dimensions()
            found = sheet.iter_rows(values_only=True)
            rows = "\n".join(budget.measured(_rows(budget.counted(found))))
            pages.append((number, f"{sheet.title}\n{rows}" if rows else ""))
    except ParseError:
        raise
    except Exception as exc:
        raise invalid("XLSX", exc) from exc
    finally:
        workbook.close()
    return from_pages(pages, "XLSX")


# Columns read: openpyxl pads every row to its last cell, so one cell in column XFD costs
# 16,384 cells a row; 1,024 (AMJ) is far past what a sheet meant for people uses.
MAX_COLUMNS = 1024
# Cells read in a workbook, empty ones up to each row's last cell (or column AMJ) included:
# a couple of seconds of work at the most.
MAX_CELLS = 20_000_000


# Characters of text read from a workbook: more than a text file the upload limit (50 MiB)
# lets in. A shared string (up to 32,767 characters) is stored once and named by each cell
# in 20 bytes of XML that compress to almost nothing, so a 2 KB workbook was 60 million
# characters and 229 MiB of memory, and a slightly larger one would have been gigabytes.
MAX_TEXT_CHARS = 64 * 1024 * 1024


class _Budget:
    def __init__(self) -> None:
        self.cells = 0
        self.chars = 0

    def measured(self, lines: Iterator[str]) -> Iterator[str]:
        for line in lines:
            self.chars += len(line) + 1
            if self.chars > MAX_TEXT_CHARS:
                raise ParseError(
                    f"the workbook's cells hold more than {MAX_TEXT_CHARS:,} characters of "
                    "text (a cell's shared text counts each time a cell shows it): split it "
                    "into smaller workbooks or save it as CSV"
                )
            yield line

    def counted(self, rows: Iterator[tuple[object, ...]]) -> Iterator[tuple[object, ...]]:
        """The rows cut at MAX_COLUMNS, counted against MAX_CELLS."""
        for whole in rows:
            row = whole[:MAX_COLUMNS]
            self.cells += len(row)
            if self.cells > MAX_CELLS:
                raise ParseError(
                    f"the workbook has more than {MAX_CELLS:,} cells (rows × columns, empty "
                    "ones included): split it into smaller workbooks or save it as CSV"
                )
            yield row


def _rows(rows: Iterator[tuple[object, ...]]) -> Iterator[str]:
    for row in rows:
        cells: list[str] = []
        empty = 0
        for value in row:
            cell = _cell(value)
            empty = 0 if cell else empty + 1
            if empty <= MAX_EMPTY_RUN:
                cells.append(cell)
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            yield "\t".join(cells)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time(0):
        return value.date().isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return " ".join(str(value).split())
