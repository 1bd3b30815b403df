"""Metadata as terms: plain strings ``key␟tag␟value`` whose byte order is the values' order, so
every store runs a filter as term, terms and range lookups over one field."""

from __future__ import annotations

import struct
from collections.abc import Mapping

from bunko.domain.metadata.values import CATEGORY_KEY, Value

# ␟ (unit separator) never appears in a key (see values._KEY) and splits key, type tag and value.
SEP = "\x1f"


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
