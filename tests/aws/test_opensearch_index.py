"""OpenSearchServerlessIndex against osmem-server (BM25, kuromoji, filters, deletes) and the
k-NN request bodies against the documented shape (osmem does not execute k-NN)."""

from __future__ import annotations

import json

import pytest

from bunko.adapters.aws.opensearch import queries as q
from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex, SearchBackendError
from bunko.errors import ValidationError
from bunko.ports import IndexEntry, SearchFilter
from tests.aws.conftest import INDEX
from tests.aws.index_entries import OTHER, WS, entry
from tests.aws.stand_ins import Tapped


def test_mapping_has_kuromoji_text_and_faiss_vector(opensearch, search_index):
    mapping = opensearch.indices.get_mapping(index=search_index.index_name)
    props = mapping[search_index.index_name]["mappings"]["properties"]
    assert props["text"]["analyzer"] == "bunko_ja"
    assert props["text"]["fields"]["std"]["analyzer"] == "bunko_std"
    for keyword in ("chunk_id", "document_id", "workspace_id", "category", "entry_id"):
        assert props[keyword]["type"] == "keyword"
    assert props["vector"]["type"] == "knn_vector"
    assert props["vector"]["dimension"] == 4
    assert props["vector"]["method"]["engine"] == "faiss"
    assert props["vector"]["method"]["name"] == "hnsw"
    assert search_index.ensure_index() is False  # already there


def test_japanese_word_inside_running_text(search_index):
    search_index.index(
        [
            entry(0, "これは全文検索エンジンの説明です"),
            entry(1, "東京都に住んでいます"),
            entry(2, "The search engine indexes text"),
        ]
    )
    hits = search_index.keyword_search("検索", SearchFilter(workspace_id=WS), 5)
    assert [h.chunk_id for h in hits] == ["c0"]
    # kuromoji base forms: 住む finds 住んで
    assert [h.chunk_id for h in search_index.keyword_search("住む", SearchFilter(WS), 5)] == ["c1"]
    english = search_index.keyword_search("engine", SearchFilter(WS), 5)
    assert [h.chunk_id for h in english] == ["c2"]
    assert english[0].document_id == "d1" and english[0].score > 0


def test_filters_apply_in_the_engine(search_index):
    search_index.index(
        [
            entry(0, "shared words here", doc="d1", category="a"),
            entry(1, "shared words here", doc="d2", category="b"),
            entry(2, "shared words here", doc="d3", ws=OTHER),
        ]
    )

    def ids(filters):
        return sorted(h.chunk_id for h in search_index.keyword_search("shared", filters, 10))

    assert ids(SearchFilter(WS)) == ["c0", "c1"]
    assert ids(SearchFilter(WS, category="b")) == ["c1"]
    assert ids(SearchFilter(WS, document_ids=frozenset({"d1"}))) == ["c0"]
    assert ids(SearchFilter(WS, document_ids=frozenset())) == []
    assert ids(SearchFilter(OTHER)) == ["c2"]


def test_reindexing_a_chunk_replaces_it(search_index):
    search_index.index([entry(0, "first version")])
    search_index.index([entry(0, "second version")])
    assert search_index.count(WS) == 1
    assert search_index.keyword_search("first", SearchFilter(WS), 5) == []
    assert [h.chunk_id for h in search_index.keyword_search("second", SearchFilter(WS), 5)] == [
        "c0"
    ]


def test_bulk_never_sends_a_custom_id(opensearch):
    sent: list = []

    def spy(body, **kwargs):
        sent.extend(body)
        return opensearch.bulk(body=body, **kwargs)

    index = OpenSearchServerlessIndex(Tapped(opensearch, bulk=spy), index=INDEX, dimension=4)
    index.ensure_index()
    index.index([entry(0, "a"), entry(1, "b")])
    actions = [line["index"] for line in sent if "index" in line]
    assert len(actions) == 2
    assert all("_id" not in action for action in actions)


def test_deletes_go_by_search_then_bulk(search_index):
    search_index.index(
        [
            entry(0, "alpha", doc="d1"),
            entry(1, "alpha", doc="d1"),
            entry(2, "alpha", doc="d2"),
            entry(3, "alpha", doc="d3", ws=OTHER),
        ]
    )
    search_index.delete_chunks(WS, ["c0", "missing"])
    assert search_index.count(WS) == 2
    search_index.delete_chunks(OTHER, ["c2"])  # another workspace's id: nothing happens
    assert search_index.count(WS) == 2
    search_index.delete_document(WS, "d1")
    assert [h.chunk_id for h in search_index.keyword_search("alpha", SearchFilter(WS), 5)] == ["c2"]
    search_index.clear(WS)
    assert search_index.count(WS) == 0
    assert search_index.count(OTHER) == 1
    search_index.clear()
    assert search_index.count() == 0


def test_delete_pages_past_one_search_page(opensearch, search_index):
    paged = OpenSearchServerlessIndex(
        opensearch, index=search_index.index_name, dimension=4, page_size=7
    )
    paged.index([entry(i, f"text {i}") for i in range(30)])
    paged.delete_document(WS, "d1")
    assert paged.count(WS) == 0


def test_missing_index_reads_as_empty(opensearch):
    index = OpenSearchServerlessIndex(opensearch, index="absent", dimension=4)
    assert index.count() == 0
    assert index.keyword_search("x", SearchFilter(WS), 5) == []
    index.delete_document(WS, "d1")  # nothing to delete, no error


def test_wrong_vector_dimension_is_refused(search_index):
    bad = IndexEntry(
        chunk_id="c", document_id="d", workspace_id=WS, revision=1, text="t", vector=[1.0, 2.0]
    )
    with pytest.raises(ValidationError, match="dimensions"):
        search_index.index([bad])
    assert search_index.count() == 0


def test_hybrid_sends_bm25_and_filtered_knn_in_one_msearch(search_index):
    search_index.index([entry(0, "hybrid words")])
    calls: list = []
    paths: list = []

    def fake_msearch(body, **kwargs):
        calls.append(body)
        paths.append(kwargs.get("index"))  # the index in the path, not only in the lines
        return {
            "responses": [
                {
                    "hits": {
                        "hits": [
                            {"_score": 3.0, "_source": {"chunk_id": "c0", "document_id": "d1"}}
                        ]
                    }
                },
                {
                    "hits": {
                        "hits": [
                            {"_score": 1.8, "_source": {"chunk_id": "c0", "document_id": "d1"}},
                            {
                                "_score": 1.8,
                                "_source": {"chunk_id": "c0", "document_id": "d1"},
                            },  # duplicate
                            {"_score": 0.5, "_source": {"chunk_id": "c9", "document_id": "d2"}},
                        ]
                    }
                },
            ]
        }

    tapped = OpenSearchServerlessIndex(
        Tapped(search_index.client, msearch=fake_msearch), index=INDEX, dimension=4
    )
    filters = SearchFilter(WS, category="manuals", document_ids=frozenset({"d1", "d2"}))
    keyword, vector = tapped.hybrid_search("hybrid", [0.5, 0.5, 0.5, 0.5], filters, 7)
    assert len(calls) == 1 and paths == [tapped.index_name]
    header1, bm25, header2, knn = calls[0]
    assert header1 == header2 == {"index": tapped.index_name}
    assert (
        bm25["query"]["bool"]["filter"] == knn["query"]["knn"]["vector"]["filter"]["bool"]["filter"]
    )
    assert knn == {
        "size": 7,
        "_source": ["chunk_id", "document_id"],
        "query": {
            "knn": {
                "vector": {
                    "vector": [0.5, 0.5, 0.5, 0.5],
                    "k": 7,
                    "filter": {
                        "bool": {
                            "filter": [
                                {"term": {"workspace_id": WS}},
                                {"term": {"category": "manuals"}},
                                {"terms": {"document_id": ["d1", "d2"]}},
                            ]
                        }
                    },
                }
            }
        },
    }
    json.dumps(knn)  # the body is plain JSON (no numpy scalars)
    assert [h.chunk_id for h in keyword] == ["c0"]
    assert [h.chunk_id for h in vector] == ["c0", "c9"]  # one hit per chunk id
    assert vector[0].score == pytest.approx(0.8)  # inner-product score 1.8 → cosine 0.8
    assert vector[1].score == pytest.approx(-1.0)  # score 0.5 = 1 / (1 - ip) → ip = -1


def test_knn_errors_are_not_swallowed(search_index):
    # osmem refuses k-NN queries: the adapter surfaces the engine's error.
    with pytest.raises(SearchBackendError, match="vector search failed"):
        search_index.vector_search([1.0, 0.0, 0.0, 0.0], SearchFilter(WS), 3)


@pytest.mark.parametrize(("cosine"), [1.0, 0.8, 0.1, 0.0, -0.3, -1.0])
def test_score_conversion_inverts_the_documented_formula(cosine):
    # OpenSearch docs, faiss innerproduct: d = -ip; score = -d + 1 if d < 0 else 1 / (1 + d)
    d = -cosine
    score = -d + 1 if d < 0 else 1 / (1 + d)
    assert q.cosine_from_score(score) == pytest.approx(cosine)


def test_keyword_only_index_has_no_vector_field():
    body = q.index_body(None)
    assert "vector" not in body["mappings"]["properties"]
    assert "index" not in body["settings"]


def test_bulk_writes_stay_under_the_request_size_cap(opensearch):
    """500 chunks with 1,024-d vectors are 10.9-11.9 MiB of JSON, over OpenSearch's 10 MiB
    request cap: a file of ~420 chunks failed into the dead-letter queue. Each bulk request
    now stops at the byte budget, and every chunk is written."""
    sizes: list[int] = []

    def measured(body, **kw):
        sizes.append(sum(len(json.dumps(line)) + 1 for line in body))
        return opensearch.bulk(body=body, **kw)

    index = OpenSearchServerlessIndex(
        Tapped(opensearch, bulk=measured), index="bulk-size", dimension=1024
    )
    index.ensure_index()
    rng = __import__("random").Random(3)
    entries = [
        IndexEntry(
            chunk_id=f"c{i}", document_id="big", workspace_id=WS, revision=1,
            text=f"passage {i} " * 40, category=None,
            vector=[rng.uniform(-1, 1) for _ in range(1024)],
        )
        for i in range(500)
    ]  # fmt: skip
    index.index(entries)
    assert len(sizes) >= 2 and max(sizes) <= 8 * 2**20, sizes
    assert sum(sizes) > 10 * 2**20  # one request would have been over the cap
    found = index.keyword_search("passage", SearchFilter(workspace_id=WS), 600)
    assert len({h.chunk_id for h in found}) == 500


def test_two_functions_creating_the_same_index_both_succeed(opensearch):
    """A new model's index is created at run time by whichever function needs it first; the
    one that loses the race must find it there, not fail into a 60-minute SQS retry."""
    unseen = Tapped(opensearch, indices={"exists": lambda **kw: False})  # both checked first
    first = OpenSearchServerlessIndex(unseen, index="raced", dimension=4)
    second = OpenSearchServerlessIndex(unseen, index="raced", dimension=4)
    assert first.ensure_index() is True
    assert second.ensure_index() is False


def test_the_engine_timeout_is_under_the_api_functions():
    pytest.importorskip("aws_cdk", reason="the cdk extra is not installed")
    from bunko.adapters.aws.clients import OPENSEARCH_TIMEOUT
    from infra.constructs.functions import API_TIMEOUT

    assert API_TIMEOUT.to_seconds() > OPENSEARCH_TIMEOUT
