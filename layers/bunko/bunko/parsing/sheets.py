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
        for number, sheet in enumerate(workbook.worksheets, 1):
            # Dimensions written by some producers are wrong; read every row instead.
            sheet.reset_dimensions()
            rows = "\n".join(_rows(sheet.iter_rows(values_only=True)))
            pages.append((number, f"{sheet.title}\n{rows}" if rows else ""))
    except ParseError:
        raise
    except Exception as exc:
        raise invalid("XLSX", exc) from exc
    finally:
        workbook.close()
    return from_pages(pages, "XLSX")


def _rows(rows: Iterator[tuple[object, ...]]) -> Iterator[str]:
    for row in rows:
        cells = [_cell(value) for value in row]
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
