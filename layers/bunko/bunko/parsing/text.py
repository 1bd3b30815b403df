"""Text formats: plain text and Markdown, CSV/TSV, JSON — and the text decoder they share."""

from __future__ import annotations

import codecs
import csv
import json
import re
from collections.abc import Iterator

import charset_normalizer

from bunko.errors import ParseError
from bunko.parsing.document import MAX_EMPTY_RUN, ParsedDocument, from_text, invalid

_BOMS = (  # UTF-32 first: its little-endian BOM starts with UTF-16's
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# When the detector finds several equally plausible encodings (short text often fits
# Chinese and Korean code pages too), prefer these, in this order.
_PREFERRED = ("cp932", "shift_jis", "euc_jp", "euc_jis_2004", "iso2022_jp", "cp1252")
# Shift_JIS as Windows writes it has NEC/IBM extensions (①, ㈱, ...) that only cp932 has.
_SUPERSETS = {"shift_jis": "cp932", "shift_jis_2004": "cp932", "ascii": "utf-8"}


def decode(data: bytes, charset: str | None) -> str:
    """Decode text bytes: BOM, then the declared charset, then UTF-8, then detection.

    Raises ParseError for data that is not text in any encoding.
    """
    if not data:
        raise ParseError("empty file")
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    for encoding in (charset, "utf-8"):
        if encoding:
            try:
                return data.decode(_SUPERSETS.get(encoding.lower(), encoding))
            except (UnicodeDecodeError, LookupError):
                pass
    utf16 = _utf16_without_bom(data)
    if utf16 is not None:
        return utf16
    if b"\x00" in data:
        raise ParseError("binary data, not text")
    return _detect(data)


def _utf16_without_bom(data: bytes) -> str | None:
    """UTF-16 text with mostly-ASCII content has a NUL in every other byte."""
    sample = data[:4096]
    if len(sample) < 4 or len(data) % 2:
        return None
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    many = len(sample) // 2 * 0.3
    if odd > many and even == 0:
        encoding = "utf-16-le"
    elif even > many and odd == 0:
        encoding = "utf-16-be"
    else:
        return None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return None


def _detect(data: bytes) -> str:
    matches = list(charset_normalizer.from_bytes(data))
    if not matches:
        raise ParseError("binary data, not text (no text encoding fits)")
    best = matches[0]
    tied = {m.encoding: m for m in matches if m.chaos <= best.chaos + 0.01}
    chosen = next((tied[e] for e in _PREFERRED if e in tied), best)
    encoding = _SUPERSETS.get(chosen.encoding, chosen.encoding)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return str(chosen)


def parse_plain(data: bytes, charset: str | None) -> ParsedDocument:
    return from_text(decode(data, charset), "text")


def parse_csv(data: bytes, charset: str | None, *, delimiter: str = ",") -> ParsedDocument:
    """One line per row, cells separated by tabs (quoting and embedded newlines resolved); a
    run of more than MAX_EMPTY_RUN empty cells becomes that many, as in a workbook."""
    text = decode(data, charset)
    try:
        rows = "\n".join(line for line in _rows(text, delimiter) if line)
    except csv.Error as exc:
        raise invalid("CSV", exc) from exc
    del text  # the decoded file is not needed while the rows are normalised
    return from_text(rows, "CSV")


# The csv module builds a row's cells all at once, a str object (50 bytes and more) per
# cell: a 10 MB row of "cell," was 2 million of them and 390 MiB. A physical line is given
# to it in pieces of about this many characters, cut before a delimiter, so a row costs
# memory in proportion to its text.
CSV_PIECE_CHARS = 64 * 1024
_LINE_ENDS = re.compile(r"\r\n|\r|\n")  # where a file opened with newline="" ends a line


def _rows(text: str, delimiter: str) -> Iterator[str]:
    """Each row's cells, tab-separated, a row read piece by piece (see CSV_PIECE_CHARS).

    A record the reader ends at a piece's end that is not a line's end goes on in the next
    piece, whose first cell is the empty one before its leading delimiter: concatenated,
    the two records' joined cells are the row's. (Inside a quoted field the reader takes a
    piece's end as nothing, so a cut there changes nothing.)"""
    pieces = _Pieces(text, delimiter)
    parts: list[str] = []
    for record in csv.reader(pieces, delimiter=delimiter):
        parts.append("\t".join(" ".join(cell.split()) for cell in record))
        if pieces.row_ended:
            yield _row(parts)
    if parts:
        yield _row(parts)


_GAP = re.compile(f"\t{{{MAX_EMPTY_RUN + 2},}}")


def _row(parts: list[str]) -> str:
    """The row the parts make, its trailing empty cells dropped; `parts` is emptied."""
    row = "".join(parts)
    parts.clear()  # before the copies below: a row can be the whole file
    return _GAP.sub("\t" * (MAX_EMPTY_RUN + 1), row.rstrip("\t"))


class _Pieces:
    """The text's lines, a long one in pieces cut before a delimiter; `row_ended`: whether
    the piece given last ended a line (or the text)."""

    def __init__(self, text: str, delimiter: str) -> None:
        self.text, self.delimiter = text, delimiter
        self.row_ended = True

    def __iter__(self) -> Iterator[str]:
        text, at = self.text, 0
        for end in _LINE_ENDS.finditer(text):
            yield from self._cut(at, end.end())
            at = end.end()
        if at < len(text):
            yield from self._cut(at, len(text))

    def _cut(self, start: int, end: int) -> Iterator[str]:
        while end - start > CSV_PIECE_CHARS:
            cut = self.text.find(self.delimiter, start + CSV_PIECE_CHARS, end)
            if cut < 0:
                break  # one long cell: the reader's field size limit answers for it
            self.row_ended = False
            yield self.text[start:cut]
            start = cut
        self.row_ended = True
        yield self.text[start:end]


def parse_json(data: bytes, charset: str | None) -> ParsedDocument:
    """Flatten JSON to "path: value" lines (a.b[0].c: value); strings keep their text."""
    text = decode(data, charset)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise invalid("JSON", exc) from exc
    return from_text("\n".join(_flatten(value)), "JSON")


def _flatten(value: object) -> Iterator[str]:
    # An explicit stack: JSON nesting can be deep enough to exhaust recursion.
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            keys = [(f"{path}.{key}" if path else str(key), sub) for key, sub in item.items()]
            stack.extend(reversed(keys))
        elif isinstance(item, list):
            stack.extend(reversed([(f"{path}[{i}]", sub) for i, sub in enumerate(item)]))
        elif item is None or item == "":
            continue
        else:
            shown = ("true" if item else "false") if isinstance(item, bool) else str(item)
            yield f"{path}: {shown}" if path else shown
