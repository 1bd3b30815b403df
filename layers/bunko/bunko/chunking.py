"""Split extracted text into overlapping, sentence-aware chunks (English and Japanese).

A chunk's ``content`` is exactly ``text[start:end]``. It is never longer than ``chunk_size``
characters (code points), never ends with whitespace and starts with whitespace only when
that whitespace carries a combining mark. It never cuts a grapheme cluster (a letter and its
combining marks, an emoji ZWJ sequence, a flag) unless one cluster alone is longer than
``chunk_size``.

How: the text is cut into *pieces* — sentences (split at blank lines, and after . ! ? 。！？．
with any closing quotes or brackets after them); a sentence longer than ``chunk_size`` is
split at line breaks, then at whitespace and 、，,;:, then into short runs of grapheme
clusters. Pieces are packed greedily up to ``chunk_size``; the next chunk starts with as many
whole trailing pieces of the previous one as fit in ``chunk_overlap``, or, when even the last
piece is too long for that, at a word (or grapheme) boundary at most ``chunk_overlap``
characters back.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

import regex

from bunko.errors import ValidationError
from bunko.graphemes import Boundaries

__all__ = ["TextChunk", "chunk_text"]

_CLOSERS = "\"'”’)\\]}」』）】》〉〕＞"
# Each separator pattern ends in a group "gap" holding the whitespace after it: a piece
# ends where the gap starts and the next one starts where the gap ends.
# ASCII . ! ? end a sentence only before whitespace (so 3.14 and example.com stay whole);
# Japanese 。！？． end one anywhere; a blank line ends a paragraph.
_SENTENCE_END = re.compile(
    rf"(?:[.!?]+[{_CLOSERS}]*(?=\s|\Z)|[。！？．]+[{_CLOSERS}]*|(?=\n[^\S\n]*\n))(?P<gap>\s*)"
)
_LINE_END = re.compile(r"(?P<gap>\n\s*)")
_WORD_END = re.compile(r"(?:[、，,;；:：]|(?=\s))(?P<gap>\s*)")
_LEVELS = (_SENTENCE_END, _LINE_END, _WORD_END)
# Where a character-level overlap would rather begin: at the start of a word or clause.
_SOFT_START = re.compile(r"(?<=[\s、，,;；:：])\S")
# Text with no separator at all is cut into runs of this many grapheme clusters: short
# enough to fill chunks nearly to chunk_size and to carry the overlap in whole runs.
_RUN = regex.compile(r"\X{1,32}")
_CLUSTER = regex.compile(r"\X")


@dataclass(frozen=True, slots=True)
class TextChunk:
    content: str
    start: int
    end: int
    page: int | None = None
    page_breaks: tuple[tuple[int, int], ...] = ()  # (offset, page) of pages begun inside


def chunk_text(
    text: str,
    *,
    chunk_size: int,
    chunk_overlap: int,
    pages: Sequence[tuple[int, int, int]] | None = None,
) -> list[TextChunk]:
    """Chunk ``text``; ``pages`` are (start, end, page_no) spans, as in ParsedDocument.

    Each chunk gets the page of its start offset (None without pages) and the offsets where
    later pages begin inside it, so a sentence deep in a chunk cites its own page. Raises
    ValidationError unless ``chunk_size > 0`` and ``0 <= chunk_overlap < chunk_size``.
    """
    if chunk_size <= 0:
        raise ValidationError(f"chunk_size must be positive, got {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValidationError(
            f"chunk_overlap must be >= 0 and < chunk_size ({chunk_size}), got {chunk_overlap}"
        )
    if not text or text.isspace():
        return []
    cuts = _Cuts(text)
    page_of = _page_lookup(pages)
    starts = sorted((s, n) for s, e, n in pages or () if e > s)
    firsts = [s for s, _ in starts]
    return [
        TextChunk(
            text[start:end],
            start,
            end,
            page_of(start),
            tuple(starts[bisect.bisect_right(firsts, start) : bisect.bisect_left(firsts, end)]),
        )
        for start, end in _pack(cuts, _pieces(cuts, chunk_size), chunk_size, chunk_overlap)
    ]


class _Cuts:
    """The text plus the one question every cut asks: is this a grapheme boundary?"""

    def __init__(self, text: str) -> None:
        self.text = text
        self._boundaries = Boundaries(text)

    def safe(self, at: int) -> bool:
        return at in self._boundaries

    def trim(self, start: int, end: int) -> tuple[int, int]:
        """[start, end) without surrounding whitespace, widened back to grapheme boundaries."""
        part = self.text[start:end]
        stripped = part.lstrip()
        if not stripped:
            return end, end
        left = start + len(part) - len(stripped)
        right = left + len(stripped.rstrip())
        while left > start and not self.safe(left):
            left -= 1
        while right < end and not self.safe(right):
            right += 1
        return left, right


def _pieces(cuts: _Cuts, limit: int) -> Iterator[tuple[int, int]]:
    """Trimmed spans of at most ``limit`` characters (bar giant clusters), in text order.

    Yielded, not listed: a line of ten million characters and no sentence end is millions
    of word pieces, and a list of them was 300 MiB; the packer holds one chunk's worth."""

    def descend(start: int, end: int, level: int) -> Iterator[tuple[int, int]]:
        for s, e in _split(cuts, start, end, _LEVELS[level]):  # depth <= len(_LEVELS)
            if e - s <= limit:
                yield s, e
            elif level + 1 < len(_LEVELS):
                yield from descend(s, e, level + 1)
            else:
                yield from _runs(cuts, s, e, limit)

    return descend(*cuts.trim(0, len(cuts.text)), 0)  # _split expects a trimmed span


def _split(
    cuts: _Cuts, start: int, end: int, pattern: re.Pattern[str]
) -> Iterator[tuple[int, int]]:
    """The trimmed, non-empty spans of text[start:end] between matches of ``pattern``."""
    text, seg = cuts.text, start
    for m in pattern.finditer(text, start, end):
        cut = m.end()
        if cut >= end:
            break
        if cut == m.start() or not cuts.safe(cut):
            continue  # e.g. 。 followed by a combining mark: keep them together
        stop = m.start("gap")
        if stop > seg:
            # Before whitespace only a Prepend character joins a cluster.
            if text[stop - 1].isspace() or (stop != cut and not cuts.safe(stop)):
                yield from _trimmed(cuts, seg, stop)
            else:  # the fast path: seg starts and stop ends on a non-space boundary
                yield seg, stop
        seg = cut
    yield from _trimmed(cuts, seg, end)


def _trimmed(cuts: _Cuts, start: int, end: int) -> Iterator[tuple[int, int]]:
    left, right = cuts.trim(start, end)
    if left < right:
        yield left, right


def _runs(cuts: _Cuts, start: int, end: int, limit: int) -> Iterator[tuple[int, int]]:
    """Cut a span with no separator into runs of whole grapheme clusters."""
    for m in _RUN.finditer(cuts.text, start, end):
        s, e = m.span()
        # Long clusters: fall back to one cluster at a time.
        for left, right in _cluster_runs(cuts.text, s, e, limit) if e - s > limit else [(s, e)]:
            left, right = cuts.trim(left, right)  # whitespace can hide inside a span
            if left < right:
                yield left, right


def _cluster_runs(text: str, start: int, end: int, limit: int) -> Iterator[tuple[int, int]]:
    cur = start
    for m in _CLUSTER.finditer(text, start, end):
        if m.end() - cur <= limit:
            continue
        if m.start() > cur:
            yield cur, m.start()
            cur = m.start()
        while m.end() - cur > limit:  # a single cluster longer than a chunk: cut it
            yield cur, cur + limit
            cur += limit
    if cur < end:
        yield cur, end


def _pack(
    cuts: _Cuts, pieces: Iterator[tuple[int, int]], size: int, overlap: int
) -> Iterator[tuple[int, int]]:
    # `window`: the pieces from the first one the current chunk has not covered yet, as far
    # as read; a chunk and the overlap's look-back never reach before it.
    window = list(islice(pieces, 1))
    if not window:
        return
    start = window[0][0]  # the chunk's start offset
    while True:
        last = 0
        while True:
            if last + 1 == len(window):
                following = next(pieces, None)
                if following is None:
                    break
                window.append(following)
            if window[last + 1][1] - start > size:
                break
            last += 1
        yield start, window[last][1]
        if last + 1 == len(window):
            return
        # The next chunk must start late enough for the next piece to fit in it.
        lowest = max(window[last + 1][1] - size, start + 1)
        start, first = _next_start(cuts, window, last, lowest, overlap)
        del window[:first]


def _next_start(
    cuts: _Cuts, window: list[tuple[int, int]], last: int, lowest: int, overlap: int
) -> tuple[int, int]:
    """Start offset and first piece (in `window`) of the chunk after the one ending with
    piece ``last``."""
    prev_end = window[last][1]
    if overlap:
        k = last
        while k >= 0 and window[k][0] >= lowest and prev_end - window[k][0] <= overlap:
            k -= 1
        if k < last:  # whole trailing pieces fit in the overlap
            return window[k + 1][0], k + 1
        at = _soft_start(cuts, max(prev_end - overlap, lowest), prev_end)
        if at is not None:
            return at, last + 1
    return window[last + 1][0], last + 1


def _soft_start(cuts: _Cuts, begin: int, end: int) -> int | None:
    """First word start in [begin, end), else first boundary before a non-space, else None."""
    text = cuts.text
    for m in _SOFT_START.finditer(text, begin, end):
        if cuts.safe(m.start()):
            return m.start()
    for at in range(begin, end):
        if not text[at].isspace() and cuts.safe(at):
            return at
    return None


def _page_lookup(pages: Sequence[tuple[int, int, int]] | None) -> Callable[[int], int | None]:
    if not pages:
        return lambda _offset: None
    ordered = sorted(pages)
    firsts = [start for start, _, _ in ordered]

    def page_of(offset: int) -> int | None:
        # The span holding the offset, or the last one before it: a separator between
        # pages belongs to the page above it.
        return ordered[max(bisect.bisect_right(firsts, offset) - 1, 0)][2]

    return page_of
