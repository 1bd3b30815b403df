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

The table keeps each language's weights. A term's merged weight is its lowest in any
language (a word common anywhere weighs little): what the background coverage reads, the same
for a question in any language. The evidence (services/search/evidence.py) reads a question in
its own language (`in_its_language`): "dog" is a common Danish word ("but"), and weighs 0.1
merged, but 1.0 in an English question about the office.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from bunko.domain.answer_terms import asked_line
from bunko.domain.keyword_analysis import QueryTerm, index_terms, is_cjk_term, query_terms

TABLE = Path(__file__).with_name("data") / "term_weights_by_language.tsv.gz"
MIN_WEIGHT = 0.1  # a very common word still counts a little: "What is it?" has terms
MAX_WEIGHT = 2.0  # a word rarer than one in 100,000 words, or in no list (a name, a code)
KANA_WEIGHT = MIN_WEIGHT
_HIRAGANA = re.compile("[\u3041-\u309f]")


@cache
def _by_language() -> dict[str, dict[str, float]]:
    """Language → term → weight (terms not listed weigh MAX_WEIGHT in that language)."""
    table: dict[str, dict[str, float]] = {}
    with gzip.open(TABLE, "rt", encoding="utf-8") as f:
        for line in f:
            lang, term, tenths = line.rstrip("\n").split("\t")
            table.setdefault(lang, {})[term] = int(tenths) / 10
    return table


@cache
def tables_mark() -> str:
    """A mark of the table's contents: a reading of a text that used its languages
    (services/search/evidence.py) names it, so a new table reads the text again."""
    return f"{zlib.crc32(TABLE.read_bytes()):08x}"


def _with_kana(term: str, weight: float) -> float:
    return min(weight, KANA_WEIGHT) if _HIRAGANA.search(term) else weight


@cache
def term_weight(term: str) -> float:
    """The term's merged weight: its lowest in any language."""
    weight = min((t.get(term, MAX_WEIGHT) for t in _by_language().values()), default=MAX_WEIGHT)
    return _with_kana(term, weight)


def weighted_terms(query: str) -> list[tuple[QueryTerm, float]]:
    """The query's terms (as the engines analyse it, stop words kept: they weigh little
    here) with their merged background weights."""
    return [(t, term_weight(t.text)) for t in query_terms(query, drop_stop_words=False)]


# Languages whose common words a query holds almost as much as the best one's: a question
# that reads as two languages (short, or mixed) gets each term's lower weight of the two.
NEAR_BEST = 0.8


def query_languages(terms: Sequence[str]) -> list[str]:
    """The languages a query is written in, judged by its words: each language scores what
    the words it knows weigh less than MAX_WEIGHT (common words, question words count most);
    the best and those NEAR_BEST of it. Empty when no language knows any of its words."""
    table = _by_language()
    score = {
        lang: sum(MAX_WEIGHT - weights[t] for t in set(terms) if t in weights)
        for lang, weights in table.items()
    }
    best = max(score.values(), default=0.0)
    if best <= 0:
        return []
    return sorted(lang for lang, s in score.items() if s >= NEAR_BEST * best)


def _content_character(term: QueryTerm) -> QueryTerm:
    """A bigram that joins a kanji or katakana character to hiragana (犬を, 行け) read as that
    character, matched inside any term (the particle or ending is not what the question asks);
    any other term as it is."""
    text = term.text
    if len(text) != 2 or not is_cjk_term(text) or not _HIRAGANA.search(text):
        return term
    content = [c for c in text if not _HIRAGANA.match(c)]
    return QueryTerm(content[0], expand=True) if len(content) == 1 else term


def in_its_language(query: str) -> list[tuple[QueryTerm, float]]:
    """The query's terms as evidence reads them (services/search/evidence.py): kana-joined
    bigrams read as their content character, each term weighed in the query's own
    language(s) (query_languages); where no language knows its words, the merged weights."""
    terms = list(
        dict.fromkeys(_content_character(t) for t in query_terms(query, drop_stop_words=False))
    )
    languages = query_languages([t.text for t in terms])
    if not languages:
        return [(t, term_weight(t.text)) for t in terms]
    table = _by_language()
    return [
        (t, _with_kana(t.text, min(table[lang].get(t.text, MAX_WEIGHT) for lang in languages)))
        for t in terms
    ]


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


# The passages whose words tell the language they are written in (a few: cheap, and enough).
PASSAGE_SAMPLE = 5


def written_alike(question: str, passages: Sequence[str]) -> bool | None:
    """Is the question (its last line: a follow-up's earlier lines are the conversation's)
    written in a language one of the first passages is written in? None when either side is
    in no language the tables know (Thai, a random string). The offline answerer asks it of a
    question that shares few words with its passages: a paraphrase in their language, or a
    question in another."""
    last = asked_line(question)
    asked = set(query_languages([t.text for t in query_terms(last, drop_stop_words=False)]))
    written = [set(query_languages(list(index_terms(p)))) for p in passages[:PASSAGE_SAMPLE]]
    if not asked or not any(written):
        return None
    return any(asked & languages for languages in written)
