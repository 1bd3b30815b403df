"""Term statistics behind the keyword weight, kept between searches.

Every keyword search on OpenSearch needs the query's analysed terms (`_analyze`, once per
keyword field) and their document frequencies (one `_msearch` of a count per term, plus the
index's size). A warm function serves many searches, and people repeat words: an analysis
never changes for an index, so it is kept (least recently used first out); counts drift
only as documents arrive, so they are kept for MAX_AGE seconds (a vector collection makes
writes searchable only at its next refresh, about a minute, anyway) and forgotten when this
process writes.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from opensearchpy import OpenSearch

from bunko.adapters.aws.opensearch import queries as q

MAX_AGE = 60.0  # seconds a document frequency is reused
MAX_ANALYSES = 2048  # (field, text) analyses kept
MAX_COUNTS = 50_000  # (field, term) counts kept

Term = tuple[str, str]  # (field, analysed token)
_TOTAL: Term = ("", "")  # the index's entry count, kept beside the terms'
# (terms to count, whether to count the index's entries too) -> (entries or None, counts)
Counter = Callable[[list[Term], bool], tuple[int | None, list[int]]]


class SearchBackendError(RuntimeError):
    """The engine answered a request with an error."""


class TermStatistics:
    def __init__(
        self,
        client: OpenSearch,
        index: str,
        *,
        max_age: float = MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.index_name = index
        self.max_age = max_age
        self.clock = clock  # seconds, monotonic: a count's age is measured on it
        self._lock = threading.Lock()
        self._analyses: OrderedDict[Term, list[str]] = OrderedDict()
        self._counts: OrderedDict[Term, tuple[float, int]] = OrderedDict()

    def idf_mass(self, query: str) -> float:
        """Σ idf of the query's terms in each keyword field (opensearch/queries.py idf_sum)."""
        if not query.strip():
            return 0.0
        terms = [
            (field, token)
            for field in q.KEYWORD_FIELDS
            for token in self.tokens(field, query, lambda field=field: self._analyse(field, query))
        ]
        if not terms:
            return 0.0
        total, frequencies = self.frequencies(terms, self._count)
        return q.idf_sum(total, frequencies)

    def _analyse(self, field: str, text: str) -> list[str]:
        response = self.client.indices.analyze(
            index=self.index_name, body={"field": field, "text": text}
        )
        return [token["token"] for token in response.get("tokens", [])]

    def _count(self, terms: list[Term], total: bool) -> tuple[int | None, list[int]]:
        body = q.term_count_bodies(terms, total=total)
        responses = self.client.msearch(index=self.index_name, body=body)["responses"]
        counts = []
        for response in responses:
            if "error" in response:
                raise SearchBackendError(f"term statistics failed: {response['error']}")
            counts.append(int(response["hits"]["total"]["value"]))
        return (counts[0], counts[1:]) if total else (None, counts)

    def tokens(self, field: str, text: str, analyse: Callable[[], list[str]]) -> list[str]:
        key = (field, text)
        with self._lock:
            if key in self._analyses:
                self._analyses.move_to_end(key)
                return self._analyses[key]
        found = analyse()
        with self._lock:
            self._analyses[key] = found
            while len(self._analyses) > MAX_ANALYSES:
                self._analyses.popitem(last=False)
        return found

    def frequencies(self, terms: Sequence[Term], count: Counter) -> tuple[int, list[int]]:
        """(entries in the index, entries holding each term), counting only what is not
        known or is older than max_age, in one call of `count`."""
        now = self.clock()
        with self._lock:
            known = {
                term: found[1]
                for term in (_TOTAL, *terms)
                if (found := self._counts.get(term)) and now - found[0] <= self.max_age
            }
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        if missing or _TOTAL not in known:
            total, counted = count(missing, _TOTAL not in known)
            fresh = dict(zip(missing, counted, strict=True))
            if total is not None:
                fresh[_TOTAL] = total
            known.update(fresh)
            with self._lock:
                for term, value in fresh.items():
                    self._counts[term] = (now, value)
                    self._counts.move_to_end(term)
                while len(self._counts) > MAX_COUNTS:
                    self._counts.popitem(last=False)
        return known[_TOTAL], [known[t] for t in terms]

    def forget_counts(self) -> None:
        """This process wrote: its next searches count again."""
        with self._lock:
            self._counts.clear()
