"""Request bodies for OpenSearch Serverless: the index mapping and the sub-queries.

Pure functions, so the k-NN bodies (which the local stand-in cannot execute) are tested
against the documented shape, and the rest runs for real.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bunko.adapters.aws.opensearch.metadata import TERMS_MAPPING, filter_query
from bunko.ports import SearchFilter

VECTOR_FIELD = "vector"
TEXT_FIELD = "text"
SOURCE_FIELDS = ["chunk_id", "document_id"]
# The fields a keyword query scores (multi_match most_fields sums their BM25).
KEYWORD_FIELDS = (TEXT_FIELD, f"{TEXT_FIELD}.std")
# Lucene's BM25 (OpenSearch 2.x): idf · tf / (tf + k1 · (1 - b + b · dl / avgdl)), k1 = 1.2.
BM25_K1 = 1.2
# HNSW build parameters: the OpenSearch defaults, written down so the mapping is explicit.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128


def index_body(dimension: int | None) -> dict[str, Any]:
    """Mapping and settings. Text is analysed by kuromoji (Japanese: words inside running
    text, base forms) with a `std` sub-field (standard tokenizer, English stemming) for
    everything else; ids are keywords so filters are exact, and so are the metadata terms
    (one keyword array: opensearch/metadata.py)."""
    properties: dict[str, Any] = {
        "chunk_id": {"type": "keyword"},
        "document_id": {"type": "keyword"},
        "workspace_id": {"type": "keyword"},
        "category": {"type": "keyword"},
        "revision": {"type": "integer"},
        # A random per-entry key: a unique sort for search_after paging (no _id sorting).
        "entry_id": {"type": "keyword"},
        **TERMS_MAPPING,
        TEXT_FIELD: {
            "type": "text",
            "analyzer": "bunko_ja",
            "fields": {"std": {"type": "text", "analyzer": "bunko_std"}},
        },
    }
    settings: dict[str, Any] = {
        "analysis": {
            "analyzer": {
                "bunko_ja": {
                    "type": "custom",
                    "tokenizer": "kuromoji_tokenizer",
                    "filter": ["kuromoji_baseform", "cjk_width", "lowercase"],
                },
                # The standard tokenizer with English stemming (runs, running → run); no
                # stop words, so a query of only "and" or "not" still matches them.
                "bunko_std": {
                    "type": "custom",
                    "tokenizer": "standard",
                    "filter": ["lowercase", "porter_stem"],
                },
            }
        }
    }
    if dimension:
        settings["index"] = {"knn": True}
        properties[VECTOR_FIELD] = {
            "type": "knn_vector",
            "dimension": dimension,
            "method": {
                "name": "hnsw",
                "engine": "faiss",
                # Embeddings are L2-normalised, so inner product is cosine similarity.
                "space_type": "innerproduct",
                "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
            },
        }
    return {"settings": settings, "mappings": {"properties": properties}}


def filter_clauses(filters: SearchFilter) -> list[dict[str, Any]]:
    """The same filters for every sub-query (DESIGN decision 4)."""
    clauses: list[dict[str, Any]] = [{"term": {"workspace_id": filters.workspace_id}}]
    if filters.category is not None:
        clauses.append({"term": {"category": filters.category}})
    if filters.document_ids is not None:
        clauses.append({"terms": {"document_id": sorted(filters.document_ids)}})
    if filters.metadata is not None:
        clauses.append(filter_query(filters.metadata))
    return clauses


def keyword_body(query: str, filters: SearchFilter, limit: int) -> dict[str, Any]:
    return {
        "size": limit,
        "_source": SOURCE_FIELDS,
        "query": {
            "bool": {
                "must": [
                    {
                        "multi_match": {
                            "query": query,
                            "fields": list(KEYWORD_FIELDS),
                            "type": "most_fields",
                        }
                    }
                ],
                "filter": filter_clauses(filters),
            }
        },
    }


def knn_body(vector: Sequence[float], filters: SearchFilter, limit: int) -> dict[str, Any]:
    """Filtered approximate k-NN: the filter runs inside the faiss search (efficient
    filtering), so k results come back even when the filter is selective."""
    return {
        "size": limit,
        "_source": SOURCE_FIELDS,
        "query": {
            "knn": {
                VECTOR_FIELD: {
                    "vector": [float(x) for x in vector],
                    "k": limit,
                    "filter": {"bool": {"filter": filter_clauses(filters)}},
                }
            }
        },
    }


def cosine_from_score(score: float) -> float:
    """Undo OpenSearch's inner-product score (faiss): score = 1 + ip when ip >= 0, else
    1 / (1 - ip). For unit vectors the inner product is the cosine similarity."""
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


def match_body(clauses: list[dict[str, Any]], *, size: int, after: list | None) -> dict[str, Any]:
    """A page of entries matching `clauses`, sorted on a unique key for search_after."""
    body: dict[str, Any] = {
        "size": size,
        "_source": False,
        "query": {"bool": {"filter": clauses}} if clauses else {"match_all": {}},
        "sort": [{"entry_id": "asc"}],
    }
    if after:
        body["search_after"] = after
    return body


def term_count_bodies(
    terms: Sequence[tuple[str, str]], *, total: bool = True
) -> list[dict[str, Any]]:
    """`_msearch` lines counting the entries holding each analysed (field, term), after one
    line counting every entry (if `total`): the document frequencies behind the engine's own
    idf (index wide, as Lucene's BM25 computes it, so the ratio to a BM25 score is
    consistent)."""
    lines: list[dict[str, Any]] = []
    head = [{"match_all": {}}] if total else []
    queries = [*head, *({"term": {field: term}} for field, term in terms)]
    for query in queries:
        lines += [{}, {"size": 0, "track_total_hits": True, "query": query}]
    return lines


def idf_sum(total: int, frequencies: Sequence[int]) -> float:
    """Σ idf · 1/(1 + k1): the BM25 an average-length entry holding each term once scores."""
    return sum(
        math.log(1.0 + (total - df + 0.5) / (df + 0.5)) / (1.0 + BM25_K1) for df in frequencies
    )
