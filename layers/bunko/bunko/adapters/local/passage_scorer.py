"""BM25 over a closed set of passages (a sealed corpus), with the keyword index's analysis.

The statistics are the passages' own, not the workspace's, so a corpus ranks the same way
however the knowledge base around it changes (what makes its searches reproducible).
Pure Python and numpy: both shapes use it (no engine round trip for a few thousand texts).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bunko.adapters.local.keyword_analysis import index_terms, query_terms
from bunko.adapters.local.keyword_index import KeywordIndex


class Bm25PassageScorer:
    def keyword_scores(
        self, query: str, texts: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        terms = query_terms(query)
        if not terms or not texts or limit <= 0:
            return []
        return _index(texts).search(terms, np.ones(len(texts), dtype=bool), limit)

    def keyword_weight(self, query: str, texts: Sequence[str]) -> float:
        terms = query_terms(query)
        if not terms or not texts:
            return 0.0
        return _index(texts).query_weight(terms, np.ones(len(texts), dtype=bool))


def _index(texts: Sequence[str]) -> KeywordIndex:
    index = KeywordIndex()
    index.add_many(0, [index_terms(t) for t in texts])
    return index
