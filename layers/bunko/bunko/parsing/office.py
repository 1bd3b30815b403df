"""Word documents (.docx): paragraphs and tables in reading order, via python-docx."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

import docx
from docx.table import Table, _Cell
from docx.text.paragraph import Paragraph

from bunko.errors import ParseError
from bunko.parsing.document import ParsedDocument, from_text, invalid

# Encrypted OOXML files and the legacy binary formats are OLE compound files, not ZIP.
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Bounds on what a package may inflate to, checked from its directory before any part is
# read (zipfile never inflates a part past its declared size: it fails the CRC instead). An
# XML part becomes an lxml tree of about ten times its size, so its bound is the tighter one;
# 32 MiB of document.xml is thousands of pages.
MAX_XML_PART_BYTES = 32 * 1024 * 1024
MAX_INFLATED_BYTES = 256 * 1024 * 1024
MAX_PARTS = 10_000


def check_package(data: bytes, kind: str) -> None:
    """Fail early, with a message a person can act on, for what is not an OOXML package."""
    if data.startswith(_OLE_MAGIC):
        raise ParseError(
            f"the {kind} file is password-protected or in the old binary Office format; "
            f"save it as {kind} without a password"
        )
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise invalid(kind, "not a ZIP package")
    check_inflated_size(data, kind)


def check_inflated_size(data: bytes, kind: str) -> None:
    """ParseError for a package that would inflate past the bounds (a zip bomb)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise invalid(kind, exc) from exc
    if len(parts) > MAX_PARTS:
        raise ParseError(f"the {kind} file has {len(parts)} parts; at most {MAX_PARTS} are read")
    mib = 1024 * 1024
    for part in parts:
        if part.filename.lower().endswith((".xml", ".rels")) and (
            part.file_size > MAX_XML_PART_BYTES
        ):
            raise ParseError(
                f"the {kind} file's part {part.filename} inflates to {part.file_size // mib} MiB;"
                f" at most {MAX_XML_PART_BYTES // mib} MiB of XML per part is read"
            )
    total = sum(part.file_size for part in parts)
    if total > MAX_INFLATED_BYTES:
        raise ParseError(
            f"the {kind} file inflates to {total // mib} MiB;"
            f" at most {MAX_INFLATED_BYTES // mib} MiB is read"
        )


def parse_docx(data: bytes) -> ParsedDocument:
    check_package(data, "DOCX")
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = list(_blocks(document.iter_inner_content()))
    except ParseError:
        raise
    except Exception as exc:  # python-docx/lxml/zipfile raise many types for damaged files
        raise invalid("DOCX", exc) from exc
    return from_text("\n\n".join(block for block in blocks if block), "DOCX")


def _blocks(content: Iterator[Paragraph | Table]) -> Iterator[str]:
    for block in content:
        if isinstance(block, Paragraph):
            yield block.text
        else:
            yield "\n".join(_table_rows(block))


def _table_rows(table: Table) -> Iterator[str]:
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            # A merged cell appears once per grid column it spans: keep it once.
            if cell._tc is previous:
                continue
            previous = cell._tc
            cells.append(" ".join(_cell_text(cell).split()))
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            yield "\t".join(cells)


def _cell_text(cell: _Cell) -> str:
    parts: list[str] = []
    for block in cell.iter_inner_content():
        if isinstance(block, Paragraph):
            parts.append(block.text)
        else:  # a nested table, flattened into the cell
            parts.extend(_table_rows(block))
    return " ".join(parts)
