"""BM25 over a closed set of passages (a sealed corpus), with the keyword index's analysis.

The statistics are the passages' own, not the workspace's, so a corpus ranks the same way
however the knowledge base around it changes (what makes its searches reproducible).
Pure Python and numpy: both shapes use it (no engine round trip for a few thousand texts).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bunko.adapters.local.engine.keyword_index import KeywordIndex
from bunko.domain.keyword_analysis import index_terms, query_terms


class Bm25PassageScorer:
    def keyword_scores(
        self, query: str, texts: Sequence[str], limit: int
    ) -> tuple[list[tuple[int, float]], float]:
        terms = query_terms(query)
        if not terms or not texts or limit <= 0:
            return [], 0.0
        index, everything = _index(texts), np.ones(len(texts), dtype=bool)
        return index.search(terms, everything, limit), index.query_weight(terms, everything)


def _index(texts: Sequence[str]) -> KeywordIndex:
    index = KeywordIndex()
    index.add_many(0, [index_terms(t) for t in texts])
    return index
