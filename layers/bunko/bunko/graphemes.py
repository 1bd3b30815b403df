"""Grapheme-cluster boundaries (UAX #29) from the `regex` module's `\\X`, for the chunker.

`Boundaries(text)` answers whether a cut at an offset would split one user-perceived
character (a letter from its accents, an emoji ZWJ sequence, a flag, an Indic conjunct).
The chunker asks only where it considers a cut, so each answer segments a few characters
with `\\X`, from the nearest offset known to be a boundary, instead of the whole text.
"""

from __future__ import annotations

import bisect
from itertools import accumulate

import regex

__all__ = ["PLAIN", "Boundaries"]

# Latin (CR aside), general punctuation, CJK punctuation, kana, CJK ideographs and fullwidth
# forms, without their combining marks: no grapheme rule joins two of these, so an offset
# between two of them is a boundary without asking \X (the common case, kept cheap).
PLAIN = (
    r"\x00-\x0c\x0e-\u02ff\u2010-\u2027\u2030-\u205e\u3000-\u3029\u3030-\u3098\u309b-\u9fff"
    r"\uff01-\uff9d"
)
_IS_PLAIN = regex.compile(rf"[{PLAIN}]")
_LAST_PLAIN_PAIR = regex.compile(rf"(?r)[{PLAIN}][{PLAIN}]")
_CLUSTER = regex.compile(r"(?s)\X")


class Boundaries:
    def __init__(self, text: str) -> None:
        self.text = text
        # Offsets proven to be boundaries by earlier answers, sorted: a segmentation that
        # starts at one of them is exact, so later answers near them start there.
        self._known = [0]
        # Every boundary from the last segmentation, which the next questions usually fall in
        # (the chunker walks a cut back and forth over a few offsets).
        self._window = [0]

    def __contains__(self, at: int) -> bool:
        """True if a cut at `at` splits no grapheme cluster (always at 0 and at the end)."""
        text = self.text
        if at <= 0 or at >= len(text):
            return True
        if _IS_PLAIN.match(text, at - 1) and _IS_PLAIN.match(text, at):
            return True
        window = self._window
        if not window[0] <= at <= window[-1]:
            window = self._window = self._segment(at)
        return window[bisect.bisect_left(window, at)] == at

    def _segment(self, at: int) -> list[int]:
        """The exact cluster boundaries from a known boundary before `at` to one at or after."""
        text = self.text
        start = self._known[bisect.bisect_left(self._known, at) - 1]
        pair = _LAST_PLAIN_PAIR.search(text, start, at)
        if pair:
            start = pair.start() + 1
        end = min(at + 8, len(text))
        while True:
            # \X on text[start:end]: every cluster end but the last (cut at `end`) is exact.
            ends = list(accumulate(map(len, _CLUSTER.findall(text, start, end)), initial=start))
            if end == len(text):
                break
            if ends[-2] >= at:
                ends.pop()
                break
            end = min(end + 2 * (end - start), len(text))
        bisect.insort(self._known, ends[-1])
        return ends
