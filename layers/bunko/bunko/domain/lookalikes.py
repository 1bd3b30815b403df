"""How a name looks: two names that read alike are one name.

`lookalike_key`'s rule, shared by usernames (services/accounts/usernames.py) and library
names (domain/libraries.py): NFKC, case folded, spaces collapsed, accents on Latin letters
dropped (`ADMİN` → `admin`), and each non-ASCII letter that passes for an ASCII one replaced
by it (a Cyrillic `аdmіn` → `admin`; the lookalikes come from confusable-homoglyphs).
Names in one script (ボブ, Müller) keep their letters.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from confusable_homoglyphs import confusables


def folded(text: str) -> str:
    """NFKC, case folded, spaces collapsed ("Ｂｏｂ  Docs" → "bob docs")."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def lookalike_key(text: str) -> str:
    """`text` as it looks: without accents on Latin letters, every letter that passes for
    an ASCII one replaced by it (before case folding: a Cyrillic `Т` passes for `T`, its
    lower case `т` for nothing), then `folded`."""
    nfkc = unicodedata.normalize("NFKC", text)
    return folded("".join(ascii_lookalike(c) for c in unaccented(nfkc)))


def unaccented(text: str) -> str:
    """Without the accents on Latin letters (é → e, İ → I); other scripts' marks (the
    dakuten of ボ) are letters of their own and stay."""
    kept: list[str] = []
    for char in unicodedata.normalize("NFKD", text):
        if unicodedata.combining(char) and kept and kept[-1].isascii():
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


@cache
def ascii_lookalike(char: str) -> str:
    """The ASCII letter or digit `char` passes for (lower case), or `char` itself."""
    if char.isascii():
        return char
    for homoglyph in confusables.is_confusable(char, greedy=True, preferred_aliases=[]) or []:
        for candidate in homoglyph["homoglyphs"]:
            glyph = candidate["c"]
            if len(glyph) == 1 and glyph.isascii() and glyph.isalnum():
                return glyph.lower()
    return char
