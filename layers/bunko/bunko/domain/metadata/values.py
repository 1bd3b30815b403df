"""Metadata values: a client's key → value object checked and put in canonical form (numbers
as floats, dates as ISO 8601 text), and shown back as clients read it."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

import regex

from bunko.errors import ValidationError

CATEGORY_KEY = "category"

MAX_KEYS = 32
# A document's whole metadata as UTF-8 JSON: DynamoDB keeps an item in 400 KB, and 32 lists
# of 32 Japanese strings of 256 characters would be ~790 KB.
MAX_METADATA_BYTES = 16_384
MAX_KEY_LENGTH = 64
MAX_STRING_LENGTH = 256
MAX_LIST_ITEMS = 32

# Letters and digits of any script, `_` and `-`; no dots (they would read as paths), no
# leading `_` or `-`.
_KEY = regex.compile(r"^[\p{L}\p{N}][\p{L}\p{N}_\-]*$")

Value = str | float | list[str]
Metadata = dict[str, Value]


def normal_date(text: str) -> str | None:
    """ISO 8601 date or date-time text in one canonical form, else None (a plain string).
    ValidationError for a date whose moment in UTC falls outside years 1 to 9999: the range
    every store keeps as four-digit ISO text (9999-12-31T23:00-05:00 is in year 10000)."""
    # ASCII digits only: str.isdigit() also holds for "²" and "١", which int() refuses.
    if len(text) < 10 or not (text[:4].isascii() and text[:4].isdigit()) or text[4] != "-":
        return None
    try:
        if len(text) == 10:
            return date.fromisoformat(text).isoformat()
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:  # a time without a zone is taken as UTC
        try:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
        except OverflowError:
            raise ValidationError(f"date {text[:40]!r} is outside years 1 to 9999 in UTC") from None
    return moment.isoformat(timespec="seconds") + "Z"


def check_key(key: object, *, where: str) -> str:
    """`key` if it is a valid metadata key, else ValidationError naming `where`."""
    if not isinstance(key, str) or not key:
        raise ValidationError(f"{where}: a metadata key must be a non-empty string")
    if len(key) > MAX_KEY_LENGTH:
        raise ValidationError(
            f"{where}: metadata key {key[:20]!r}… is over {MAX_KEY_LENGTH} characters"
        )
    if not _KEY.match(key):
        raise ValidationError(
            f"{where}: metadata key {key!r} may hold only letters, digits, '_' and '-' "
            "(and start with a letter or digit)"
        )
    return key


def _check_string(value: str, *, where: str) -> str:
    text = value.strip()
    if not text:
        raise ValidationError(f"{where}: an empty string is not a value (leave the key out)")
    if len(text) > MAX_STRING_LENGTH:
        raise ValidationError(f"{where}: a value is over {MAX_STRING_LENGTH} characters")
    if any(ord(c) < 32 for c in text):
        raise ValidationError(f"{where}: a value may not hold control characters")
    return normal_date(text) or text


def _check_value(key: str, value: object) -> Value:
    where = f"metadata.{key}"
    if isinstance(value, bool) or value is None:
        raise ValidationError(f"{where}: use a string, a number, a date or a list of strings")
    if isinstance(value, int | float):
        number = float(value)
        if not math.isfinite(number):
            raise ValidationError(f"{where}: a number must be finite")
        return number
    if isinstance(value, str):
        return _check_string(value, where=where)
    if isinstance(value, list | tuple):
        if len(value) > MAX_LIST_ITEMS:
            raise ValidationError(f"{where}: a list holds at most {MAX_LIST_ITEMS} strings")
        items: list[str] = []
        for item in value:
            if not isinstance(item, str):
                raise ValidationError(f"{where}: a list may hold only strings")
            text = _check_string(item, where=where)
            if text not in items:
                items.append(text)
        if not items:
            raise ValidationError(f"{where}: an empty list is not a value (leave the key out)")
        return items
    raise ValidationError(f"{where}: use a string, a number, a date or a list of strings")


def check_metadata(raw: object) -> Metadata:
    """A client's metadata object, checked and in canonical form (ValidationError naming the
    key otherwise). Numbers become floats; date text becomes ISO 8601 (UTC for times)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValidationError("metadata must be a JSON object of key → value")
    if len(raw) > MAX_KEYS:
        raise ValidationError(f"metadata holds at most {MAX_KEYS} keys")
    out: Metadata = {}
    for key, value in raw.items():
        check_key(key, where="metadata")
        if key == CATEGORY_KEY:
            raise ValidationError("metadata.category: the category is its own field; set that")
        out[key] = _check_value(key, value)
    size = len(json.dumps(out, ensure_ascii=False).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise ValidationError(
            f"metadata is {size:,} bytes as JSON; at most {MAX_METADATA_BYTES:,} (fewer or "
            "shorter values)"
        )
    return out


def given_metadata(raw: object) -> Metadata | None:
    """A door's optional metadata: None when left out (a document keeps what it has), else
    checked as check_metadata does."""
    return None if raw is None else check_metadata(raw)


def shown(metadata: Mapping[str, Value]) -> dict[str, Any]:
    """Metadata as clients read it: whole numbers as integers."""
    return {
        k: int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 2**53 else v
        for k, v in metadata.items()
    }


def is_date(text: str) -> bool:
    """Whether `text` is already a date in canonical form (as check_metadata stores dates)."""
    try:
        return normal_date(text) == text
    except ValidationError:  # out of range: stored as text, never as a date
        return False
