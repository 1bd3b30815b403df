"""The embedded search engine: hybrid BM25 + HNSW search per workspace, durable in SQLite.

Its face is what the rest of the code builds: `LocalSearchIndex` (the SearchIndex port),
`GenerationIndex` and `GenerationMarks` (one index per embedding model),
`Bm25PassageScorer` (BM25 inside a sealed corpus, on both shapes) and `EngineTuning` (the
knobs an index is built with). Nothing outside this
package imports its modules (tests/architecture); tests of one part may. The parts:

  search_index         LocalSearchIndex: writes committed to the store, then mirrored in
                       each workspace's engines; which engines are loaded; when they are saved
  index_generations    a generation per embedding model, and its stale mark
  tuning               the sizes and shares that pick a write's or a search's path
  index_store          the durable half: every entry and tombstone in one SQLite file
  unit_vectors         vectors checked and normalised as the index takes them
  workspace_engines    one workspace in memory: slots, keyword and vector engines, filters
  workspace_snapshots  its snapshot on disk: writing, opening, replaying, rebuilding
  slot_columns         per-slot columns (key, chunk, document, category, live) and masks
  keyword_index        BM25 scoring over the postings, and picking the best slots
  keyword_postings     vocabulary, slot lengths, the unsorted buffer, a query's postings
  keyword_segments     immutable CSR postings segments, merged and memory-mapped
  vector_index         the HNSW graph, its pending tail and background inserts, ranking
  duplicate_groups     near-duplicate vectors sharing one graph node
  vector_sketches      int8 sketches that shortlist a filtered search's rows
  vector_rows          a memory-mapped file of rows (float16 vectors, int8 sketches)
  passage_scorer       BM25 over a closed set of passages

Names are imported on first use: the AWS shape takes only the passage scorer (numpy), not
the local extra's usearch and threadpoolctl that the index needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bunko.lazy_exports import lazy_face

if TYPE_CHECKING:
    from bunko.adapters.local.engine.index_generations import GenerationIndex, GenerationMarks
    from bunko.adapters.local.engine.passage_scorer import Bm25PassageScorer
    from bunko.adapters.local.engine.search_index import LocalSearchIndex
    from bunko.adapters.local.engine.tuning import EngineTuning

__all__ = [
    "Bm25PassageScorer",
    "EngineTuning",
    "GenerationIndex",
    "GenerationMarks",
    "LocalSearchIndex",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "Bm25PassageScorer": "passage_scorer",
        "EngineTuning": "tuning",
        "GenerationIndex": "index_generations",
        "GenerationMarks": "index_generations",
        "LocalSearchIndex": "search_index",
    },
)
