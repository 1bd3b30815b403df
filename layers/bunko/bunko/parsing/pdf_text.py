"""A PDF page's text as paragraphs, not as the lines the page happened to wrap.

pypdf gives one line of text per line of the page. Its text runs also carry where they sit,
so a paragraph break is where the gap to the next line is wider than the page's usual line
pitch (PARAGRAPH_GAP times it), where the type size changes (a heading), or where the text
jumps up (a new column); those become blank lines. Inside a paragraph the lines are then
joined back into sentences by domain/reflow, with the whole document's words deciding what a
hyphen at a line's end was (`exam-` + `ple` → `example`; `well-` + `known` stays
`well-known`). Text a page gives without positions (or OCR'd text) is joined by its shape
alone.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bunko.domain.reflow import Vocabulary, reflow

__all__ = ["PageLine", "join_pages", "page_lines"]

PARAGRAPH_GAP = 1.4  # a gap this many times the usual line pitch starts a paragraph
SIZE_CHANGE = 0.15  # a line whose type is this much larger or smaller starts one too


@dataclass
class PageLine:
    text: str
    y: float | None = None  # the baseline's height on the page (PDF units, up is larger)
    size: float = 0.0  # the largest type on the line


def page_lines(page: Any) -> tuple[str, list[PageLine] | None]:
    """The page's text as pypdf extracts it, and its lines with their positions (None when
    the positions do not add up to that text)."""
    runs: list[tuple[str, list[float], float]] = []

    def visit(text: str, cm: list[float], tm: list[float], _font: Any, size: float) -> None:
        if text:
            runs.append((text, _times(tm, cm), size))

    text = page.extract_text(visitor_text=visit) or ""
    if "".join(r[0] for r in runs) != text:
        return text, None
    lines = [PageLine("")]
    for piece, matrix, size in runs:
        for i, part in enumerate(piece.split("\n")):
            if i:
                lines.append(PageLine(""))
            line = lines[-1]
            if part.strip():
                if line.y is None:
                    line.y = matrix[5]
                scale = math.hypot(matrix[2], matrix[3]) or 1.0
                line.size = max(line.size, abs(size) * scale)
            line.text += part
    return text, [line for line in lines if line.text.strip()]


def _times(tm: list[float], cm: list[float]) -> list[float]:
    """The text matrix in page space (tm × cm, PDF's row-vector convention)."""
    a, b, c, d, e, f = tm
    a2, b2, c2, d2, e2, f2 = cm
    return [
        a * a2 + b * c2,
        a * b2 + b * d2,
        c * a2 + d * c2,
        c * b2 + d * d2,
        e * a2 + f * c2 + e2,
        e * b2 + f * d2 + f2,
    ]


def paragraphs(lines: Sequence[PageLine]) -> str:
    """The lines, a blank line wherever a paragraph starts."""
    pitches = [
        a.y - b.y
        for a, b in itertools.pairwise(lines)
        if a.y is not None and b.y is not None and a.y > b.y and _same_size(a, b)
    ]
    usual = statistics.median(pitches) if pitches else None
    out: list[str] = []
    for i, line in enumerate(lines):
        if i and _starts_paragraph(lines[i - 1], line, usual):
            out.append("")
        out.append(line.text.strip())
    return "\n".join(out)


def _same_size(a: PageLine, b: PageLine) -> bool:
    return abs(a.size - b.size) <= SIZE_CHANGE * max(a.size, b.size, 1e-6)


def _starts_paragraph(previous: PageLine, line: PageLine, usual: float | None) -> bool:
    if previous.y is None or line.y is None:
        return False
    if not _same_size(previous, line) or line.y >= previous.y:
        return True  # another type size (a heading), or the text went up (a new column)
    return usual is not None and previous.y - line.y > PARAGRAPH_GAP * usual


def join_pages(pages: Sequence[tuple[int, str, list[PageLine] | None]]) -> list[tuple[int, str]]:
    """(page number, text) with paragraphs apart and the lines inside them joined."""
    laid_out = [(n, paragraphs(lines) if lines else text) for n, text, lines in pages]
    vocabulary = Vocabulary(text for _, text in laid_out)
    return [(n, reflow(text, vocabulary)) for n, text in laid_out]
