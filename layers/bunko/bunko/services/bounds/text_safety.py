"""Names shown to people (file names, paths, usernames) must read as what they are.

A right-to-left override (U+202E) makes `invoice_<U+202E>fdp.exe` display as
`invoice_exe.pdf`; bidi embeddings, isolates and marks reorder text the same way. Such
characters, and control characters, are refused in any name a user gives.
"""

from __future__ import annotations

import unicodedata

from bunko.errors import ValidationError

# LRE RLE PDF LRO RLO, LRI RLI FSI PDI, LRM RLM, ALM
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)


def check_name(text: str, *, field: str) -> str:
    """`text`, or ValidationError if it holds bidi or other control characters."""
    if any(ch in BIDI_CONTROLS for ch in text):
        raise ValidationError(f"{field} must not contain bidi control characters")
    if any(unicodedata.category(ch) == "Cc" for ch in text):
        raise ValidationError(f"{field} must not contain control characters")
    return text
