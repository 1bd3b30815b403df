"""How much a query term tells about a passage, judged by general language, not the library.

The engines' BM25 weighs a term by the library's own statistics, so in a library of one file
every question word ("What", "Wie viele", したのは) is absent, weighs most, and a question
about the very file covers a fraction of its weight. The relevance gate instead weighs each
term by its self-information in general language (a table shipped in the package, built from
wordfreq's lists by `tests/bench/build_term_weights.py`): question and function words of any
language weigh almost nothing, a rare word or a name weighs most, whatever the library's size.

In Japanese, a bigram holding hiragana spans a particle, an ending or okurigana (した, のは,
ですか); content words are written in kanji and katakana. Such bigrams weigh at most
KANA_WEIGHT, which the word lists cannot tell on their own (they never see a bigram across
two words).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from bunko.domain.keyword_analysis import QueryTerm, index_terms, query_terms

TABLE = Path(__file__).with_name("data") / "term_weights.tsv.gz"
MIN_WEIGHT = 0.1  # a very common word still counts a little: "What is it?" has terms
MAX_WEIGHT = 2.0  # a word rarer than one in 100,000 words, or in no list (a name, a code)
KANA_WEIGHT = MIN_WEIGHT
_HIRAGANA = re.compile("[\u3041-\u309f]")


@cache
def _table() -> dict[str, float]:
    with gzip.open(TABLE, "rt", encoding="utf-8") as f:
        return {term: int(tenths) / 10 for term, tenths in (line.split("\t") for line in f)}


def term_weight(term: str) -> float:
    weight = _table().get(term, MAX_WEIGHT)
    if _HIRAGANA.search(term):
        return min(weight, KANA_WEIGHT)
    return weight


def weighted_terms(query: str) -> list[tuple[QueryTerm, float]]:
    """The query's terms (as the engines analyse it, stop words kept: they weigh little
    here) with their background weights."""
    return [(t, term_weight(t.text)) for t in query_terms(query, drop_stop_words=False)]


def coverage(terms: Sequence[tuple[QueryTerm, float]], text_terms: Iterable[str]) -> float:
    """The weighted share of the query's terms that a passage holds, in [0, 1]."""
    total = sum(w for _, w in terms)
    if total <= 0:
        return 0.0
    held = set(text_terms)
    chars = "".join(t for t in held if len(t) <= 2) if any(t.expand for t, _ in terms) else ""
    found = sum(w for t, w in terms if (t.text in chars if t.expand else t.text in held))
    return found / total


def text_coverage(terms: Sequence[tuple[QueryTerm, float]], text: str) -> float:
    return coverage(terms, index_terms(text))
