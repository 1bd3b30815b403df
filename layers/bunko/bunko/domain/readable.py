"""What a person reads of a passage's line when it is quoted: Markdown without its syntax,
structured rows in words, and which lines are not worth quoting. Pure functions, no I/O.

- Markdown: list markers, emphasis, inline code, links and images go; the words stay
  ("- **SEV1**: Page the commander." reads "SEV1: Page the commander.").
- Boilerplate ("This section was last reviewed on …", "© 2026 …", "最終更新日：…") says
  nothing about the subject: never quoted.
- Flattened JSON ("office_locations[1].desks: 24", as the JSON parser stores it) reads as
  "Osaka office location: 24 desks": the record is named by its name-like field (city,
  name, title …) from the lines beside it; the name-like line itself is not quoted.
- Table rows (tab-separated, as CSV and spreadsheets are stored, or Markdown's `| a | b |`):
  the header row is never quoted, and a row under a header reads "Osaka — desks: 24;
  manager: Ken Sato." A row whose header is not in the passage reads "Osaka, 24, Ken Sato."
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["is_boilerplate", "is_list_item", "plain_markdown", "structured_lines"]

# A line about the page, at its start: "This section was last reviewed …", "Last updated:
# …", "© 2026 …", "最終更新日：…". Not a sentence that says when its subject changed ("The
# rules were last updated in 1998"): that can be the answer.
_BOILERPLATE = re.compile(
    r"^\s*(?:(?:this|the)\s+(?:page|section|document|article|file|handbook|policy|guide|"
    r"runbook|manual|wiki|content|information)\s+(?:was|is|has\s+been|were)\s+(?:last\s+|"
    r"recently\s+)?(?:reviewed|updated|modified|edited|revised|changed|checked)\b|"
    r"(?:page\s+|document\s+)?last\s+(?:reviewed|updated|modified|edited|revised|changed)\b|"
    r"(?:©|\(c\)\s|copyright\b)|(?:confidential|internal use only|do not distribute|"
    r"table of contents|back to top)\s*[.!]?\s*$|最終(?:更新|改訂|見直し|確認)|無断(?:転載|複製)|"
    r"著作権(?:所有|表示))|\ball rights reserved\b",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+•・●■◆▪◦]\s+|\d{1,3}[.)]\s+|>\s*)+")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()\s]|\([^()\s]*\))*\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(
    r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])|(?<!\w)_(?=\S)([^_]+?)(?<=\S)_(?!\w)"
)
_CODE = re.compile(r"`+([^`]+?)`+")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")

# "a.b[0].c: value", as parsing/text.py flattens JSON: a path with a "." or "[n]" in it.
_JSON_LINE = re.compile(r"^(?P<path>[^\s:.\[\]]+(?:\[\d+\]|\.[^\s:.\[\]]+)+): (?P<value>.+)$")
_SEGMENT = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")
# Fields that name their record: "city: Osaka" makes "Osaka office location".
_NAME_FIELDS = (
    "name", "title", "city", "label", "office", "location", "site", "country", "region",
    "team", "department", "product", "project", "code", "id", "名前", "名称", "氏名", "拠点名",
    "都市", "タイトル",
)  # fmt: skip
_WIDE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]")
_NUMBER = re.compile(r"^-?[\d,]*\.?\d+(?:\s?%|\s?[A-Za-z]{1,4})?$")
_PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_PIPE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


# Words one of which every boilerplate line holds: most sentences hold none, and skip the
# slower pattern (a tenth of the answer's time when it ran on every sentence).
_BOILERPLATE_HINTS = (
    "review", "updat", "modif", "edit", "revis", "chang", "reserved", "©", "(c)", "copyright",
    "confidential", "internal use", "distribute", "contents", "back to top", "最終", "無断",
    "著作権",
)  # fmt: skip
# What Markdown's inline syntax is made of: text without any of these (and without a list
# marker) is plain already.
_MARKS = ("*", "_", "`", "[", "~~")


def is_boilerplate(sentence: str) -> bool:
    """A line about the page, not its subject: "last reviewed/updated", copyright, "最終更新"."""
    lowered = sentence.lower()
    if not any(hint in lowered for hint in _BOILERPLATE_HINTS):
        return False
    return bool(_BOILERPLATE.search(sentence))


def is_list_item(line: str) -> bool:
    """A Markdown or plain-text list item ("- …", "* …", "1. …", "・…")."""
    return bool(_BULLET.match(line)) and not line.lstrip().startswith(">")


def plain_markdown(text: str) -> str:
    """`text` without Markdown's syntax: list markers, emphasis, code marks, links (their
    words stay), images (their alt text stays)."""
    if not _BULLET.match(text) and not any(mark in text for mark in _MARKS):
        return text
    text = _BULLET.sub("", text, count=1)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    for _ in range(2):  # **_nested_** emphasis
        text = _STRONG.sub(r"\2", text)
        text = _STRIKE.sub(r"\1", text)
        text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    return text.strip()


def structured_lines(lines: Sequence[str]) -> dict[int, str | None]:
    """For each structured line of a passage (flattened JSON, a table row or rule), by its
    position: what to quote instead (a sentence), or None for a line never quoted (a header
    row, a table rule, a record's name line). Other lines are not in the answer."""
    out: dict[int, str | None] = {}
    out.update(_json_lines(lines))
    out.update(_table_lines(lines))
    return out


def _words(name: str) -> str:
    name = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)  # camelCase
    return " ".join(name.replace("_", " ").replace("-", " ").split()).lower()


def _singular(words: str) -> str:
    head, _, last = words.rpartition(" ")
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3:
        last = last[:-1]
    return f"{head} {last}".strip()


def _segments(path: str) -> list[str | int]:
    return [int(i) if i else name for i, name in _SEGMENT.findall(path)]


def _json_lines(lines: Sequence[str]) -> dict[int, str | None]:
    parsed: dict[int, tuple[list[str | int], str]] = {}
    paths: dict[int, str] = {}
    for i, line in enumerate(lines):
        if found := _JSON_LINE.match(line.strip()):
            paths[i] = found.group("path")
            parsed[i] = (_segments(found.group("path")), found.group("value").strip())
    if len(parsed) == 1:  # one line alone is JSON only by its look: "v1.2: notes" is prose
        parsed = {i: p for i, p in parsed.items() if "[" in paths[i] or "_" in paths[i]}
    # a record's name: the value of its name-like field, from any line of the passage
    names: dict[tuple, tuple[str, str]] = {}
    for segments, value in parsed.values():
        last = segments[-1]
        if isinstance(last, str) and last.lower() in _NAME_FIELDS and len(value) <= 60:
            record = tuple(segments[:-1])
            if record not in names or _NAME_FIELDS.index(last.lower()) < _NAME_FIELDS.index(
                names[record][0]
            ):
                names[record] = (last.lower(), value)
    out: dict[int, str | None] = {}
    for i, (segments, value) in parsed.items():
        out[i] = _json_sentence(segments, value, names)
    return out


def _json_sentence(
    segments: list[str | int], value: str, names: dict[tuple, tuple[str, str]]
) -> str | None:
    indexes = [k for k, s in enumerate(segments) if isinstance(s, int)]
    field_at = indexes[-1] + 1 if indexes else len(segments) - 1
    if field_at >= len(segments):  # "tags[2]: red": the list's name is the field
        field_at = len(segments) - 2
    record, field = tuple(segments[:field_at]), segments[field_at:]
    named = names.get(record)
    if named is not None and len(field) == 1 and str(field[0]).lower() == named[0]:
        return None  # "city: Osaka" names the record the other lines speak of
    field_words = " ".join(_words(str(s)) for s in field if isinstance(s, str))
    if indexes and indexes[-1] < field_at:
        collection = next((s for s in reversed(record) if isinstance(s, str)), "")
        kind = _singular(_words(str(collection)))
        # 大阪拠点 as Japanese writes it; "Osaka office location"
        space = "" if named and _WIDE.match(named[1][-1:]) and _WIDE.match(kind[:1]) else " "
        entity = f"{named[1]}{space}{kind}" if named else f"{kind} {int(record[-1]) + 1}"
    else:
        entity = " ".join(_words(str(s)) for s in record if isinstance(s, str))
    if value in ("true", "false"):
        value = "yes" if value == "true" else "no"
    if _NUMBER.match(value) and entity and not _WIDE.search(field_words):  # "24 desks"
        sentence = f"{entity}: {value} {field_words}"
    elif entity:
        sentence = f"{entity} — {field_words}: {value}"
    else:
        sentence = f"{field_words}: {value}"
    sentence = sentence.strip()
    if sentence[-1] not in ".!?。！？":
        sentence += "."
    return sentence[0].upper() + sentence[1:]


def _cells(line: str) -> list[str]:
    if "\t" in line:
        return [c.strip() for c in line.split("\t")]
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _is_row(line: str) -> bool:
    return "\t" in line or bool(_PIPE_ROW.match(line))


def _numeric(cell: str) -> bool:
    return bool(_NUMBER.match(cell.replace(" ", "")))


def _table_lines(lines: Sequence[str]) -> dict[int, str | None]:
    out: dict[int, str | None] = {}
    i = 0
    while i < len(lines):
        if not _is_row(lines[i]) or _JSON_LINE.match(lines[i].strip()):
            i += 1
            continue
        block = i
        while i < len(lines) and (_is_row(lines[i]) or _PIPE_RULE.match(lines[i])):
            i += 1
        out.update(_table_block(lines, block, i))
    return out


def _table_block(lines: Sequence[str], start: int, end: int) -> dict[int, str | None]:
    """One run of table lines: its header (when it has one) and its rows in words."""
    rows = [(k, _cells(lines[k])) for k in range(start, end) if not _PIPE_RULE.match(lines[k])]
    header: list[str] | None = None
    if rows:
        first_at, first = rows[0]
        ruled = first_at + 1 < end and bool(_PIPE_RULE.match(lines[first_at + 1]))
        # a header is text over at least one column of numbers below it, or a Markdown
        # table's first row (a rule follows it), or the first row under a sheet's name
        titled = start > 0 and bool(lines[start - 1].strip()) and not _is_row(lines[start - 1])
        numbers_below = any(
            _numeric(cell) and col < len(first) and not _numeric(first[col])
            for _, cells in rows[1:]
            for col, cell in enumerate(cells)
        )
        if ruled or ((numbers_below or titled) and not any(_numeric(c) for c in first)):
            header = first
    out: dict[int, str | None] = {k: None for k in range(start, end) if _PIPE_RULE.match(lines[k])}
    for k, cells in rows:
        if header is not None and cells is header:
            out[k] = None
            continue
        filled = [c for c in cells if c]
        if not filled:
            out[k] = None
            continue
        if header is None:
            sentence = ", ".join(filled)
        else:
            pairs = [
                f"{header[col]}: {cell}" if col < len(header) and header[col] else cell
                for col, cell in enumerate(cells[1:], start=1)
                if cell
            ]
            sentence = (
                f"{cells[0]} — {'; '.join(pairs)}" if cells[0] and pairs else ", ".join(filled)
            )
        out[k] = sentence if sentence[-1] in ".!?。！？" else sentence + "."
    return out
