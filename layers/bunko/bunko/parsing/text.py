"""Text formats: plain text and Markdown, CSV/TSV, JSON — and the text decoder they share."""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator

import charset_normalizer

from bunko.errors import ParseError
from bunko.parsing.document import ParsedDocument, from_text, invalid

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
    """One line per row, cells separated by tabs (quoting and embedded newlines resolved)."""
    text = decode(data, charset)
    try:
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        lines = ["\t".join(_cells(row)) for row in rows]
    except csv.Error as exc:
        raise invalid("CSV", exc) from exc
    return from_text("\n".join(line for line in lines if line), "CSV")


def _cells(row: list[str]) -> list[str]:
    cells = [" ".join(cell.split()) for cell in row]
    while cells and not cells[-1]:
        cells.pop()
    return cells


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
