"""Excel workbooks (.xlsx): each sheet's name then its rows; one page per sheet."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterator

import openpyxl

from bunko.errors import ParseError
from bunko.parsing.document import ParsedDocument, from_pages, invalid
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
            # Dimensions written by some producers are wrong; read every row instead.
            sheet.reset_dimensions()
            found = sheet.iter_rows(max_col=MAX_COLUMNS, values_only=True)
            rows = "\n".join(_rows(budget.counted(found)))
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
# Cells read in a workbook, empty ones included: a couple of seconds of work at the most.
MAX_CELLS = 20_000_000


class _Budget:
    def __init__(self) -> None:
        self.cells = 0

    def counted(self, rows: Iterator[tuple[object, ...]]) -> Iterator[tuple[object, ...]]:
        for row in rows:
            self.cells += len(row)
            if self.cells > MAX_CELLS:
                raise ParseError(
                    f"the workbook has more than {MAX_CELLS:,} cells (rows × columns, empty "
                    "ones included): split it into smaller workbooks or save it as CSV"
                )
            yield row


# Empty cells kept in a row: a gap of more becomes this many. A cell in column XFD would
# otherwise cost 16,383 tabs a row (a 12 KB file, 33 MB of text), and tells search nothing.
MAX_EMPTY_RUN = 8


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
