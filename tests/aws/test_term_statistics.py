"""The keyword weight's term statistics are kept between searches (issue 30: every keyword
search added `_analyze` per field and an `_msearch` of counts): requests counted on
osmem-server, the OpenSearch API stand-in."""

from __future__ import annotations

from collections import Counter

import pytest

from bunko.adapters.aws.opensearch.term_statistics import TermStatistics
from bunko.ports import IndexEntry, SearchFilter

WS = "00000000-0000-4000-8000-0000000000aa"
ALL = SearchFilter(workspace_id=WS)


def entry(i: int, text: str) -> IndexEntry:
    return IndexEntry(chunk_id=f"c{i}", document_id=f"d{i}", workspace_id=WS, revision=1, text=text)


@pytest.fixture
def requests(search_index) -> Counter:
    """What the index asks the engine, by endpoint (_analyze, _msearch, _bulk, ...)."""
    seen: Counter = Counter()
    perform = search_index.client.transport.perform_request

    def counted(method, url, *args, **kwargs):
        seen[url.rstrip("/").rsplit("/", 1)[-1]] += 1
        return perform(method, url, *args, **kwargs)

    search_index.client.transport.perform_request = counted
    return seen


def test_a_repeated_query_asks_the_engine_nothing(search_index, requests):
    search_index.index([entry(i, t) for i, t in enumerate(
        ["orchid greenhouse care", "greenhouse heating in winter", "tomato seeds"])])  # fmt: skip
    first = search_index.keyword_weight("orchid greenhouse", ALL)
    assert requests["_analyze"] == 2 and requests["_msearch"] == 1  # two keyword fields
    requests.clear()
    assert search_index.keyword_weight("orchid greenhouse", ALL) == first
    assert requests == Counter()
    # A new query sharing a word: analysed, and only its unseen terms counted.
    search_index.keyword_weight("greenhouse tomato", ALL)
    assert requests["_analyze"] == 2 and requests["_msearch"] == 1


def test_a_write_from_this_process_makes_the_next_search_count_again(search_index, requests):
    search_index.index([entry(0, "orchid greenhouse care")])
    rare = search_index.keyword_weight("orchid", ALL)
    search_index.index([entry(i, f"orchid note {i}") for i in range(1, 8)])
    requests.clear()
    common = search_index.keyword_weight("orchid", ALL)
    assert requests["_msearch"] == 1 and requests["_analyze"] == 0  # analysis kept
    assert common < rare  # the word is in 8 of 8 entries now: it weighs less


def test_counts_older_than_their_age_are_counted_again():
    now = [0.0]
    calls = []

    def count(terms, total):
        calls.append((list(terms), total))
        return (100 if total else None), [len(calls)] * len(terms)

    stats = TermStatistics(None, "chunks", max_age=60, clock=lambda: now[0])  # type: ignore[arg-type]
    terms = [("text", "orchid"), ("text.ngram", "orc")]
    assert stats.frequencies(terms, count) == (100, [1, 1])
    now[0] = 59
    assert stats.frequencies(terms, count) == (100, [1, 1]) and len(calls) == 1
    now[0] = 61
    assert stats.frequencies([*terms, ("text", "new")], count) == (100, [2, 2, 2])
    assert calls[-1] == ([*terms, ("text", "new")], True)
    # a repeated term in one query is counted once and answered for both places
    stats.forget_counts()
    assert stats.frequencies([("text", "a"), ("text", "a")], count)[1] == [3, 3]
    assert calls[-1] == ([("text", "a")], True)
