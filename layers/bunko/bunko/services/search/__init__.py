"""Search: hybrid retrieval, fusion and calibration, the relevance gate and background terms."""

from bunko.services.search.background_terms import text_coverage, weighted_terms, written_alike
from bunko.services.search.evidence import read_sentences
from bunko.services.search.fusion import fuse, query_vector_weight, vector_weight_for
from bunko.services.search.relevance_gate import (
    for_question,
    gate_window,
    read_window,
    row_for,
    shown_order,
)
from bunko.services.search.search import SearchItem, SearchOptions, SearchService

__all__ = [
    "SearchItem",
    "SearchOptions",
    "SearchService",
    "for_question",
    "fuse",
    "gate_window",
    "query_vector_weight",
    "read_sentences",
    "read_window",
    "row_for",
    "shown_order",
    "text_coverage",
    "vector_weight_for",
    "weighted_terms",
    "written_alike",
]
