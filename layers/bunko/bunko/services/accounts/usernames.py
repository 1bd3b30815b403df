"""The username profile: what a new username may be, and when two are too much alike.

A username shows up in the admin's user list and in logs, where `аdmin` (a Cyrillic а),
`admın` (a dotless ı) or `ADMİN` (İ, which folds to i + a combining dot) pass for `admin`.
So a new username must:

- pass PRECIS UsernameCaseMapped (RFC 8265, via precis-i18n): letters and digits of any
  script and ASCII punctuation; no spaces, controls or bidi formatting characters (U+202E);
- keep to 2..64 characters of letters, digits and . _ @ + - (as before);
- not mix ASCII letters with letters of another script that pass for ASCII ones (a
  Cyrillic а among Latin letters; the lookalikes come from confusable-homoglyphs);
- not look like an existing username: `lookalike_key` drops accents and maps each letter
  that passes for an ASCII one to it (`admın`, `ADMİN`, a Cyrillic `аdmіn` all give
  `admin`), and two users may not share that key (checked by the AuthService).

Names in one script (ボブ, Müller) and mixes with nothing confusable (山田_taro) pass.
"""

from __future__ import annotations

import re

from precis_i18n import get_profile

from bunko.domain.accounts import username_key
from bunko.domain.lookalikes import ascii_lookalike as _ascii_lookalike
from bunko.domain.lookalikes import unaccented as _unaccented
from bunko.errors import ValidationError
from bunko.services.bounds import check_name

USERNAME_PATTERN = re.compile(r"^[\w.@+-]{2,64}$")
USERNAME_RULE = "username: 2 to 64 letters, digits or . _ @ + - (no spaces)"
_PROFILE = get_profile("UsernameCaseMapped")


def validate_username(username: str) -> str:
    """`username` if it fits the profile; ValidationError saying why not."""
    if isinstance(username, str):
        check_name(username, field="username")
    if not isinstance(username, str) or not USERNAME_PATTERN.fullmatch(username):
        raise ValidationError(USERNAME_RULE)
    try:
        mapped = _PROFILE.enforce(username)
    except UnicodeEncodeError as exc:
        raise ValidationError(f"{USERNAME_RULE}; {exc.reason}") from exc
    has_ascii_letters = any(c.isascii() and c.isalpha() for c in mapped)
    if has_ascii_letters and any(_ascii_lookalike(c) != c for c in _unaccented(mapped)):
        raise ValidationError(
            "username: mixes ASCII letters with other letters that look like them"
        )
    return username


def lookalike_key(username: str) -> str:
    """The username as it looks: non-ASCII letters confusable with an ASCII letter are
    replaced by it (`аdmіn` in Cyrillic → `admin`), after `username_key`'s folding and
    without accents (`ADMİN` → `admin`)."""
    return "".join(_ascii_lookalike(c) for c in _unaccented(username_key(username)))
