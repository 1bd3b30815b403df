"""Metadata filters on OpenSearch: one keyword field of terms, and whether the index maps it.

Each entry carries its document's terms (domain/metadata.terms_of) in `metadata_terms`, one
keyword array field: the keys tenants invent never grow the mapping. A filter's leaves become
`term`, `terms` and `range` (gte/lt) over it, joined by bool; keyword terms compare as UTF-8
bytes, which is code point order, the order `domain.metadata.matches` compares them in.

An index created before metadata filters has no such field. The field is added with PUT
_mapping when the adapter ensures its index; until it is mapped, entries are written without
terms, because the first entry carrying an unmapped field would map it dynamically as `text`
for the index's lifetime (a `term` query then never matches, and the keyword mapping can never
be added). A collection may refuse the PUT (a role without aoss:UpdateIndex): the adapter
then says it does not filter by metadata, and the search service hands it the passing
documents' ids instead, as it does for the local engine.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import AuthorizationException, RequestError
from opensearchpy.exceptions import NotFoundError as OpenSearchNotFound

from bunko.domain.metadata import AllOf, AnyOf, AnyTerm, Filter, Term, TermRange

TERMS_FIELD = "metadata_terms"
TERMS_MAPPING: dict[str, Any] = {TERMS_FIELD: {"type": "keyword"}}
# While the field is not mapped, look again this often: another process (the index setup)
# may add it, and entries written meanwhile carry no terms until /heal.
RECHECK_SECONDS = 300.0

log = logging.getLogger(__name__)


def filter_query(flt: Filter) -> dict[str, Any]:
    """A metadata filter (domain/metadata.parse_filter) as a query in filter context."""
    match flt:
        case Term(term):
            return {"term": {TERMS_FIELD: term}}
        case AnyTerm(terms):
            return {"terms": {TERMS_FIELD: list(terms)}}
        case TermRange(low, high):
            return {"range": {TERMS_FIELD: {"gte": low, "lt": high}}}
        case AllOf(clauses):
            return {"bool": {"filter": [filter_query(c) for c in clauses]}}
        case AnyOf(clauses):
            return {
                "bool": {"should": [filter_query(c) for c in clauses], "minimum_should_match": 1}
            }
    raise TypeError(f"not a metadata filter: {flt!r}")


class TermsMapping:
    """Whether an index maps `metadata_terms` as a keyword: asked once (GET _mapping, which
    the read-write roles may do), known for good once it does, asked again every
    RECHECK_SECONDS while it does not."""

    def __init__(
        self, client: OpenSearch, index: str, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.client = client
        self.index = index
        self._clock = clock
        self._mapped = False
        self._asked_at = -math.inf

    def mark(self, mapped: bool) -> None:
        self._mapped, self._asked_at = mapped, self._clock()

    def mapped(self) -> bool:
        if self._mapped or self._clock() - self._asked_at < RECHECK_SECONDS:
            return self._mapped
        found = self._field_type()
        if found is not None:  # a missing index is asked about again next time
            self.mark(found == "keyword")
        return self._mapped

    def _field_type(self) -> str | None:
        """The field's type ("" when unmapped); None when the index does not exist."""
        try:
            response = self.client.indices.get_mapping(index=self.index)
        except OpenSearchNotFound:
            return None
        except AuthorizationException as exc:  # a role without aoss:DescribeIndex
            log.warning("index %s: could not read its mapping (%s)", self.index, exc)
            return ""
        mappings = next(iter(response.values()), {}).get("mappings", {})
        return mappings.get("properties", {}).get(TERMS_FIELD, {}).get("type", "")

    def add(self) -> bool:
        """Map the field in an existing index if it is not yet; False (logged) when the
        collection refuses, or the name is mapped as something else."""
        found = self._field_type()
        if found == "keyword":
            self.mark(True)
            return True
        if found is None:
            return False
        try:
            self.client.indices.put_mapping(index=self.index, body={"properties": TERMS_MAPPING})
        except (AuthorizationException, RequestError) as exc:
            log.warning(
                "index %s: could not map %s (%s); metadata filters resolve to document ids",
                self.index,
                TERMS_FIELD,
                exc,
            )
            self.mark(False)
            return False
        self.mark(True)
        return True
