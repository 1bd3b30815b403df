"""Document metadata (key → string, number, date or list of strings) and the filters over it.

One encoding serves every backend: a document's metadata becomes a set of *terms*, plain
strings ``key␟tag␟value`` whose byte order is the values' order (numbers are written so that
their text sorts as they do; dates are ISO 8601 text, which sorts as time does). A filter then
needs only three leaf operations over a document's terms — one term, any of several terms, and
a range of terms — joined by AND and OR. OpenSearch runs them as `term`/`terms`/`range` over one
keyword field (no mapping grows with the keys tenants invent), SQLite over an indexed table,
and `matches` here in Python; the tests hold the three to the same answers.

The document's `category` is the key ``category`` of the same scheme, so the category filter
is one case of a metadata filter.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import regex

from bunko.errors import ValidationError

# ␟ (unit separator) never appears in a key (see _KEY) and splits key, type tag and value.
SEP = "\x1f"
CATEGORY_KEY = "category"

MAX_KEYS = 32
# A document's whole metadata as UTF-8 JSON: DynamoDB keeps an item in 400 KB, and 32 lists
# of 32 Japanese strings of 256 characters would be ~790 KB.
MAX_METADATA_BYTES = 16_384
MAX_KEY_LENGTH = 64
MAX_STRING_LENGTH = 256
MAX_LIST_ITEMS = 32
MAX_FILTER_CLAUSES = 64
MAX_FILTER_DEPTH = 4
MAX_IN_VALUES = 100

# Letters and digits of any script, `_` and `-`; no dots (they would read as paths), no
# leading `_` or `-`.
_KEY = regex.compile(r"^[\p{L}\p{N}][\p{L}\p{N}_\-]*$")

Value = str | float | list[str]
Metadata = dict[str, Value]


# --- values -----------------------------------------------------------------------------------


def _normal_date(text: str) -> str | None:
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


def _check_key(key: object, *, where: str) -> str:
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
    return _normal_date(text) or text


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
        _check_key(key, where="metadata")
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


# --- terms ------------------------------------------------------------------------------------


def _number_text(number: float) -> str:
    """16 hex digits whose text order is the numbers' order (IEEE 754 bits, sign-folded)."""
    (bits,) = struct.unpack(">Q", struct.pack(">d", number + 0.0))  # -0.0 → 0.0
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | 1 << 63
    return f"{bits:016x}"


def exists_term(key: str) -> str:
    return f"{key}{SEP}k"


def string_term(key: str, value: str) -> str:
    return f"{key}{SEP}s{SEP}{value}"


def number_term(key: str, value: float) -> str:
    return f"{key}{SEP}n{SEP}{_number_text(value)}"


def terms_of(metadata: Mapping[str, Value], category: str | None = None) -> list[str]:
    """Every term a document answers to (its category's among them), sorted."""
    terms: set[str] = set()
    for key, value in metadata.items():
        terms.add(exists_term(key))
        if isinstance(value, float):
            terms.add(number_term(key, value))
        elif isinstance(value, str):
            terms.add(string_term(key, value))
        else:
            terms.update(string_term(key, v) for v in value)
    if category:
        terms.add(exists_term(CATEGORY_KEY))
        terms.add(string_term(CATEGORY_KEY, category))
    return sorted(terms)


# --- filters ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """The document has this term."""

    term: str


@dataclass(frozen=True)
class AnyTerm:
    """The document has one of these terms."""

    terms: tuple[str, ...]


@dataclass(frozen=True)
class TermRange:
    """The document has a term in [low, high) (both bounds share a key and type tag)."""

    low: str
    high: str


@dataclass(frozen=True)
class AllOf:
    clauses: tuple[Filter, ...]


@dataclass(frozen=True)
class AnyOf:
    clauses: tuple[Filter, ...]


Filter = Term | AnyTerm | TermRange | AllOf | AnyOf

_OPERATORS = ("equals", "in", "range", "exists", "andAll", "orAll")
_RANGE_BOUNDS = ("gt", "gte", "lt", "lte")


def _after(text: str) -> str:
    """`text` with its last character raised by one: every string that starts with `text`
    sorts below it."""
    return text[:-1] + chr(ord(text[-1]) + 1)


def _value_term(key: str, value: object, *, where: str) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, list | dict):
        raise ValidationError(f"{where}: the value must be a string, a number or a date")
    if isinstance(value, int | float):
        if not math.isfinite(float(value)):
            raise ValidationError(f"{where}: a number must be finite")
        return number_term(key, float(value))
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{where}: the value must be a string, a number or a date")
    if len(value.strip()) > MAX_STRING_LENGTH:  # no stored value is longer: it matches nothing
        raise ValidationError(f"{where}: a value is over {MAX_STRING_LENGTH} characters")
    return string_term(key, _normal_date(value.strip()) or value.strip())


def _range(key: str, bounds: Mapping[str, object], *, where: str) -> TermRange:
    unknown = set(bounds) - {"key", *_RANGE_BOUNDS}
    if unknown:
        raise ValidationError(f"{where}: unknown field {sorted(unknown)[0]!r} (gt, gte, lt, lte)")
    given = {b: bounds[b] for b in _RANGE_BOUNDS if b in bounds}
    if not given:
        raise ValidationError(f"{where}: give at least one of gt, gte, lt, lte")
    if len({"gt", "gte"} & set(given)) > 1 or len({"lt", "lte"} & set(given)) > 1:
        raise ValidationError(f"{where}: give gt or gte, and lt or lte, not both")
    terms = {b: _value_term(key, v, where=f"{where}.{b}") for b, v in given.items()}
    tags = {t.split(SEP)[1] for t in terms.values()}
    if len(tags) > 1:
        raise ValidationError(f"{where}: both bounds must be numbers, or both text or dates")
    prefix = f"{key}{SEP}{tags.pop()}{SEP}"
    low, high = prefix, _after(prefix)
    if "gte" in terms:
        low = terms["gte"]
    # A date without a time stands for its whole day: "lte 2024-05-31" keeps 2024-05-31T10:00Z
    # and "gt 2024-05-31" starts on June 1 (every time of a day has the date as its prefix).
    if "gt" in terms:
        low = _after(terms["gt"]) if _day(given["gt"]) else terms["gt"] + "\x00"
    if "lt" in terms:
        high = terms["lt"]
    if "lte" in terms:
        high = _after(terms["lte"]) if _day(given["lte"]) else terms["lte"] + "\x00"
    return TermRange(low, high)


def _day(value: object) -> bool:
    """A date with no time (2024-05-31)."""
    return isinstance(value, str) and len(value.strip()) == 10 and _is_date(value.strip())


def _parse(raw: object, where: str, depth: int, budget: list[int]) -> Filter:
    budget[0] -= 1
    if budget[0] < 0:
        raise ValidationError(f"filter: at most {MAX_FILTER_CLAUSES} clauses")
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise ValidationError(
            f"{where}: each clause is an object with one operator: {', '.join(_OPERATORS)}"
        )
    ((op, body),) = raw.items()
    where = f"{where}.{op}"
    if op in ("andAll", "orAll"):
        if depth >= MAX_FILTER_DEPTH:
            raise ValidationError(f"{where}: filters nest at most {MAX_FILTER_DEPTH} deep")
        if not isinstance(body, list) or not body:
            raise ValidationError(f"{where}: a non-empty list of clauses")
        clauses = tuple(_parse(c, f"{where}[{i}]", depth + 1, budget) for i, c in enumerate(body))
        return AllOf(clauses) if op == "andAll" else AnyOf(clauses)
    if op not in _OPERATORS:
        raise ValidationError(f"{where}: unknown operator (use {', '.join(_OPERATORS)})")
    if not isinstance(body, Mapping):
        raise ValidationError(f"{where}: an object with a key")
    key = _check_key(body.get("key"), where=where)
    if op == "exists":
        if set(body) != {"key"}:
            raise ValidationError(f"{where}: only a key")
        return Term(exists_term(key))
    if op == "equals":
        if set(body) != {"key", "value"}:
            raise ValidationError(f"{where}: a key and a value")
        return Term(_value_term(key, body["value"], where=where))
    if op == "in":
        values = body.get("values")
        if set(body) != {"key", "values"} or not isinstance(values, list) or not values:
            raise ValidationError(f"{where}: a key and a non-empty list of values")
        if len(values) > MAX_IN_VALUES:
            raise ValidationError(f"{where}: at most {MAX_IN_VALUES} values")
        return AnyTerm(tuple(dict.fromkeys(_value_term(key, v, where=where) for v in values)))
    return _range(key, body, where=where)


def parse_filter(raw: object) -> Filter | None:
    """A client's filter (JSON, already decoded), checked; None for no filter. Grammar:
    ``{"equals": {"key", "value"}}``, ``{"in": {"key", "values": [...]}}``,
    ``{"range": {"key", "gt"/"gte"/"lt"/"lte": ...}}``, ``{"exists": {"key"}}``,
    ``{"andAll": [...]}``, ``{"orAll": [...]}``. ValidationError names the bad clause."""
    if raw is None or raw == {}:
        return None
    return _parse(raw, "filter", 0, [MAX_FILTER_CLAUSES])


def category_filter(category: str) -> Filter:
    """The seed contracts' `category` parameter as a metadata filter."""
    return Term(string_term(CATEGORY_KEY, category))


def both(first: Filter | None, second: Filter | None) -> Filter | None:
    """Both filters (None stands for no filter)."""
    if first is None or second is None:
        return first or second
    return AllOf((first, second))


def matches(flt: Filter, terms: Iterable[str]) -> bool:
    """Whether a document with these terms passes `flt` (the reference semantics)."""
    have = terms if isinstance(terms, set | frozenset) else set(terms)
    return _matches(flt, have)


def _matches(flt: Filter, have: set[str] | frozenset[str]) -> bool:
    match flt:
        case Term(term):
            return term in have
        case AnyTerm(terms):
            return any(t in have for t in terms)
        case TermRange(low, high):
            return any(low <= t < high for t in have)
        case AllOf(clauses):
            return all(_matches(c, have) for c in clauses)
        case AnyOf(clauses):
            return any(_matches(c, have) for c in clauses)
    raise TypeError(f"not a filter: {flt!r}")


# --- doors ------------------------------------------------------------------------------------

# A dropped file's metadata sidecar: `<file name>.metadata.json`, holding
# {"metadataAttributes": {...}} (Amazon Bedrock Knowledge Bases' convention; drops/sidecars.py).
SIDECAR_SUFFIX = ".metadata.json"


def sidecar_json(metadata: Mapping[str, Value]) -> bytes:
    """A sidecar's bytes for checked metadata (what the drops read back unchanged)."""
    return json.dumps({"metadataAttributes": shown(metadata)}, ensure_ascii=False).encode()


def decode_json(text: str | None, field: str) -> object:
    """A JSON text field of a form or query string (`metadata`, `filter`), decoded; None when
    left out or blank."""
    if text is None or not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValidationError(
            f"{field}: not valid JSON ({exc.msg} at character {exc.pos})"
        ) from exc


def summarise(
    metadatas: Iterable[Mapping[str, Value]], *, values: int = 50
) -> list[dict[str, Any]]:
    """The keys a library's documents use, for a person building a filter: each key's value
    types (string, number, date, list) and its most common text values (at most `values`)."""
    types: dict[str, set[str]] = {}
    counts: dict[str, dict[str, int]] = {}
    for metadata in metadatas:
        for key, value in metadata.items():
            seen = counts.setdefault(key, {})
            if isinstance(value, float):
                types.setdefault(key, set()).add("number")
                continue
            kind = "list" if isinstance(value, list) else "date" if _is_date(value) else "string"
            types.setdefault(key, set()).add(kind)
            for item in value if isinstance(value, list) else [value]:
                seen[item] = seen.get(item, 0) + 1
    return [
        {
            "key": key,
            "types": sorted(types[key]),
            "values": [v for v, _ in sorted(counts[key].items(), key=lambda kv: (-kv[1], kv[0]))][
                :values
            ],
        }
        for key in sorted(types)
    ]


def _is_date(text: str) -> bool:
    try:
        return _normal_date(text) == text
    except ValidationError:  # out of range: stored as text, never as a date
        return False
