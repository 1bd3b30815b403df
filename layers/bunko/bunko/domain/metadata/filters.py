"""Metadata filters: a client's JSON filter parsed into five clause kinds over terms, and the
reference matching every store's answers are held to."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bunko.domain.metadata.terms import SEP, exists_term, number_term, string_term
from bunko.domain.metadata.values import (
    CATEGORY_KEY,
    MAX_STRING_LENGTH,
    check_key,
    is_date,
    normal_date,
)
from bunko.errors import ValidationError

MAX_FILTER_CLAUSES = 64
MAX_FILTER_DEPTH = 4
MAX_IN_VALUES = 100


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
    return string_term(key, normal_date(value.strip()) or value.strip())


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
    return isinstance(value, str) and len(value.strip()) == 10 and is_date(value.strip())


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
    key = check_key(body.get("key"), where=where)
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
