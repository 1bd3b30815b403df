"""Build the background term weights the relevance gate ships (services/search/background_terms.py).

    python -m tests.bench.build_term_weights   # needs `pip install wordfreq` (not a dependency)

A term's weight says how much a query term tells about a passage, judged by general language
rather than by the library (which may hold one file): its self-information in wordfreq's
frequency lists (Speer, 2022; CC BY-SA 4.0), `-log10(f) - 3`, clipped to
[MIN_WEIGHT, MAX_WEIGHT] and rounded to a tenth. Terms are our own analysis
(domain/keyword_analysis: NFKC, case and diacritics folded, Porter-stemmed; CJK as bigrams),
so the table and the query meet term for term; a stem's frequency is the sum of its words',
kept per language: the gate reads a question's terms in the language its words are most
common in ("dog" is a common Danish word, not a common English one), and the merged weight
(a term's lowest in any language) where a query shows no language's common words.
CJK terms: every one- and two-character piece inside a word, with the word's frequency.
Terms at MAX_WEIGHT are left out: the loader gives that weight to every term not listed.
"""

from __future__ import annotations

import gzip
import math
from collections import defaultdict
from pathlib import Path

from bunko.domain.keyword_analysis import index_terms, is_cjk_term
from bunko.services.search.background_terms import MAX_WEIGHT, MIN_WEIGHT, TABLE

# Frequencies below this are not read (their weight is MAX_WEIGHT anyway).
FLOOR = 10 ** -(MAX_WEIGHT + 3)


def _pieces(word: str) -> list[str]:
    terms = index_terms(word)
    if any(is_cjk_term(t) for t in terms):  # single characters too: a query may hold one
        return sorted({*terms, *(c for t in terms if is_cjk_term(t) for c in t)})
    return sorted(set(terms))


def build() -> dict[str, dict[str, float]]:
    """Language → term → weight, for the terms below MAX_WEIGHT."""
    import wordfreq

    out: dict[str, dict[str, float]] = {}
    for lang in sorted(wordfreq.available_languages("best")):
        freq: dict[str, float] = defaultdict(float)
        for word, f in wordfreq.get_frequency_dict(lang, "best").items():
            if f < FLOOR:
                continue
            for term in _pieces(word):
                freq[term] += f
        weights = {}
        for term, f in freq.items():
            w = round(min(MAX_WEIGHT, max(MIN_WEIGHT, -math.log10(f) - 3)), 1)
            if w < MAX_WEIGHT and "\t" not in term and "\n" not in term:
                weights[term] = w
        out[lang] = weights
    return out


def main() -> None:
    by_language = build()
    out = Path(TABLE)
    lines = [
        f"{lang}\t{t}\t{round(w * 10)}"
        for lang, weights in sorted(by_language.items())
        for t, w in sorted(weights.items())
    ]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))  # the same bytes each build
    print(f"{len(lines)} terms, {out.stat().st_size:,} bytes -> {out}")


if __name__ == "__main__":
    main()
