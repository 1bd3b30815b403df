"""Spreadsheets whose cells sit far to the right (issue 33: every parser's memory and time is
the attacker's to choose). openpyxl pads each row up to its last cell, so one cell in column
XFD made a 2.5 KB file 3.3 million characters of tabs, and the text normaliser's trailing
blank regex then spent 75 s on it (its backtracking is quadratic in a run of blanks that does
not end a line). Now: columns past AMJ are not read, long gaps shrink to a few tabs, a
workbook of more than MAX_CELLS padded cells is refused, and blanks are stripped line by line.
A shared string shown by many cells multiplied a 3 KB file into 180 million characters (687
MiB): a workbook's text stops at MAX_TEXT_CHARS. And rows are no longer padded to column AMJ
before they are counted, which refused any sheet of more than 19,531 rows."""

from __future__ import annotations

import io
import zipfile

import pytest

from bunko.errors import ParseError
from bunko.parsing.document import normalize_text
from bunko.parsing.sheets import MAX_COLUMNS, MAX_EMPTY_RUN, parse_xlsx
from tests.fixtures_files import make_xlsx
from tests.security.memory import RssGrowth

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/package/2006/relationships"
DOC_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def wide_workbook(rows: int, far: str = "XFD") -> bytes:
    """A sheet whose every row holds a cell in column A and one in column `far`."""
    cells = "".join(
        f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>left {r}</t></is></c>'
        f'<c r="{far}{r}"><v>{r}</v></c></row>'
        for r in range(1, rows + 1)
    )
    return workbook(cells)


def workbook(rows_xml: str, shared: list[str] | None = None) -> bytes:
    """An XLSX package of one sheet with these <row> elements and shared strings."""
    sheet = f'<?xml version="1.0"?><worksheet xmlns="{NS}"><sheetData>{rows_xml}</sheetData></worksheet>'
    strings = "".join(f"<si><t>{text}</t></si>" for text in shared or [])
    parts = {
        "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
        "_rels/.rels": f'<?xml version="1.0"?><Relationships xmlns="{REL}"><Relationship Id="rId1" '
        f'Type="{DOC_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook xmlns="{NS}" xmlns:r="{DOC_REL}"><sheets>'
        '<sheet name="Wide" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<?xml version="1.0"?><Relationships xmlns="{REL}"><Relationship '
        f'Id="rId1" Type="{DOC_REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship '
        f'Id="rId2" Type="{DOC_REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
        "xl/sharedStrings.xml": f'<?xml version="1.0"?><sst xmlns="{NS}">{strings}</sst>',
        "xl/worksheets/sheet1.xml": sheet,
    }  # fmt: skip
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, text in parts.items():
            package.writestr(name, text)
    return out.getvalue()


def test_a_cell_in_the_last_column_costs_no_wall_of_tabs():
    data = wide_workbook(200)
    assert len(data) < 5_000
    parsed = parse_xlsx(data)
    # 200 rows of "left N"; the far cells are past the columns read
    assert parsed.text.splitlines()[:2] == ["Wide", "left 1"]
    assert len(parsed.text) < 3_000  # was 3,277,004 characters
    assert "\t" not in parsed.text


def test_a_long_gap_inside_the_read_columns_shrinks_to_a_few_tabs():
    parsed = parse_xlsx(wide_workbook(3, far="ZZ"))  # column 702
    assert MAX_COLUMNS >= 702
    assert parsed.text.splitlines()[1] == "left 1" + "\t" * (MAX_EMPTY_RUN + 1) + "1"
    # an ordinary sheet keeps its columns as they are
    plain = parse_xlsx(make_xlsx({"S": [["a", None, None, "d"], ["e", "f"]]}))
    assert plain.text == "S\na\t\t\td\ne\tf"


@pytest.mark.slow  # 30 million padded cells, memory measured
def test_a_workbook_of_too_many_padded_cells_is_refused_within_bounded_memory():
    data = wide_workbook(30_000)  # 156 KB; 30,000 rows padded to 1,024 columns
    with RssGrowth() as rss, pytest.raises(ParseError, match="more than 20,000,000 cells"):
        parse_xlsx(data)
    assert rss.growth < 64 * 1024 * 1024


def test_a_long_narrow_sheet_is_read_whole():
    # Each row is counted as wide as its own last cell: padded to column AMJ, these 25,000
    # rows of two cells were 25.6 million cells and the workbook was refused.
    rows = "".join(
        f'<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}" t="inlineStr"><is><t>b</t></is></c></row>'
        for r in range(1, 25_001)
    )
    parsed = parse_xlsx(workbook(rows))
    lines = parsed.text.splitlines()
    assert (len(lines), lines[1], lines[-1]) == (25_001, "1\tb", "25000\tb")


def shared_string_workbook(rows: int, columns: int = 20) -> bytes:
    """Every cell shows the one shared string, 30,000 characters long."""
    row = "".join('<c t="s"><v>0</v></c>' for _ in range(columns))
    cells = "".join(f'<row r="{r}">{row}</row>' for r in range(1, rows + 1))
    return workbook(cells, shared=["word " * 6_000])


@pytest.mark.slow  # 90 million characters' worth of cells, memory measured
def test_a_shared_string_shown_by_every_cell_is_refused_within_bounded_memory():
    data = shared_string_workbook(150)  # 3,000 cells: 90 million characters before
    assert len(data) < 5_000
    with RssGrowth() as rss, pytest.raises(ParseError, match="more than 67,108,864 characters"):
        parse_xlsx(data)
    assert rss.growth < 128 * 1024 * 1024
    # A workbook that shows it a few times is read as it is.
    assert parse_xlsx(shared_string_workbook(2, columns=3)).text.count("word") == 6 * 6_000


def test_blanks_are_stripped_line_by_line_whatever_their_length():
    text = "a" + "\t" * 100_000 + "b\n" + "c" + " " * 50_000 + "\n\n\n\nd  "
    assert normalize_text(text) == "a" + "\t" * 100_000 + "b\nc\n\nd"
