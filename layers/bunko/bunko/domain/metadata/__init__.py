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

Four jobs, one module each: `values` (check a client's values, show them back), `terms` (the
encoding), `filters` (parse a filter, match it) and `door_fields` (sidecars, JSON form fields,
the key summary). This face is what the rest of the package imports.
"""

from bunko.domain.metadata.door_fields import SIDECAR_SUFFIX, decode_json, sidecar_json, summarise
from bunko.domain.metadata.filters import (
    AllOf,
    AnyOf,
    AnyTerm,
    Filter,
    Term,
    TermRange,
    both,
    category_filter,
    matches,
    parse_filter,
)
from bunko.domain.metadata.terms import SEP, exists_term, number_term, string_term, terms_of
from bunko.domain.metadata.values import (
    CATEGORY_KEY,
    MAX_KEY_LENGTH,
    MAX_KEYS,
    MAX_LIST_ITEMS,
    Metadata,
    Value,
    check_metadata,
    given_metadata,
    shown,
)

__all__ = [
    "CATEGORY_KEY",
    "MAX_KEYS",
    "MAX_KEY_LENGTH",
    "MAX_LIST_ITEMS",
    "SEP",
    "SIDECAR_SUFFIX",
    "AllOf",
    "AnyOf",
    "AnyTerm",
    "Filter",
    "Metadata",
    "Term",
    "TermRange",
    "Value",
    "both",
    "category_filter",
    "check_metadata",
    "decode_json",
    "exists_term",
    "given_metadata",
    "matches",
    "number_term",
    "parse_filter",
    "shown",
    "sidecar_json",
    "string_term",
    "summarise",
    "terms_of",
]
