"""Grapheme-cluster boundaries (UAX #29), checked only where the chunker considers a cut.

`joins(text, at)` answers whether a cut at `at` would split one user-perceived character
(a letter from its accents, an emoji ZWJ sequence, a flag, an Indic conjunct, a surrogate pair).
"""

from __future__ import annotations

from functools import cache

import regex

__all__ = ["is_plain", "joins"]
_PROPS = {
    name: regex.compile(pattern)
    for name, pattern in {
        "control": r"[\p{GCB=Control}\p{GCB=CR}\p{GCB=LF}]",
        "attach": r"[\p{GCB=Extend}\p{GCB=SpacingMark}\p{GCB=ZWJ}\p{GCB=V}\p{GCB=T}]",
        "prepend": r"\p{GCB=Prepend}",
        "pict": r"\p{Extended_Pictographic}",
        "l": r"\p{GCB=L}",
        "l_next": r"[\p{GCB=L}\p{GCB=LV}\p{GCB=LVT}]",
        "ri": r"\p{GCB=Regional_Indicator}",
        "consonant": r"\p{InCB=Consonant}",
        "linker": r"\p{InCB=Linker}",
        "incb_extend": r"[\p{InCB=Extend}\p{InCB=Linker}]",
    }.items()
}


@cache
def _is(prop: str, char: str) -> bool:
    return _PROPS[prop].match(char) is not None


def is_plain(char: str) -> bool:
    """Latin-1, kana and CJK ideographs: no grapheme rule joins two of these but CR LF."""
    return char < "\u0300" or "\u3041" <= char <= "\u3096" or "\u30a0" <= char <= "\u9fff"


def joins(text: str, at: int) -> bool:
    """True if text[at-1] and text[at] belong to one grapheme cluster (0 < at < len)."""
    prev, char = text[at - 1], text[at]
    if char == "\n":
        return prev == "\r"
    if _is("control", prev) or _is("control", char):
        return False
    if _is("attach", char) or _is("prepend", prev):
        return True
    if prev == "\u200d":  # emoji ZWJ sequences (checked a little more loosely than GB11)
        return _is("pict", char)
    if _is("l", prev) and _is("l_next", char):
        return True
    if "\ud800" <= prev <= "\udbff" and "\udc00" <= char <= "\udfff":
        return True
    if _is("ri", prev) and _is("ri", char):
        # Flags pair regional indicators from the left: join if an odd number precede.
        run = at - 1
        while run > 0 and _is("ri", text[run - 1]):
            run -= 1
        return (at - run) % 2 == 1
    if _is("consonant", char):  # Indic conjuncts: consonant (extend|linker)* linker × consonant
        back, linked = at - 1, False
        while back >= 0 and _is("incb_extend", text[back]):
            linked = linked or _is("linker", text[back])
            back -= 1
        return linked and back >= 0 and _is("consonant", text[back])
    return False
