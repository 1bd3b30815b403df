"""Every SearchIndex behaves alike: the local one here, the OpenSearch one when its
stand-in is installed (`tests/contract/aws_params.py`; a skip with the reason otherwise).

A factory in SEARCH_INDEX_FACTORIES yields the adapter, or an `IndexSubject` when it needs
more: `settle` waits until writes are searchable (a cloud index refreshes on its own
schedule), `reopen` closes the adapter and opens one over the same storage (None when it
keeps nothing). Params listed in `aws_params.NO_KNN` skip the tests that need k-NN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from bunko.adapters.local.engine import LocalSearchIndex
from bunko.errors import ValidationError
from bunko.ports import IndexEntry, SearchFilter, SearchIndex
from tests.contract.params import OPENSEARCH_MISSING, adapter_params, aws_params

WS = "11111111-1111-4111-8111-111111111111"
OTHER_WS = "22222222-2222-4222-8222-222222222222"
DIM = 8


@dataclass
class IndexSubject:
    index: SearchIndex
    settle: Callable[[], None] = lambda: None
    reopen: Callable[[], SearchIndex] | None = None
    knn: bool = True

    def put(self, *entries: IndexEntry) -> None:
        self.index.index(list(entries))
        self.settle()

    def needs_knn(self) -> None:
        if not self.knn:
            pytest.skip("this param's stand-in does not run k-NN")


def _local(tmp_path: Path) -> Iterator[IndexSubject]:
    subject = IndexSubject(LocalSearchIndex(tmp_path / "index", dimension=None))

    def reopen() -> SearchIndex:
        subject.index.close()
        subject.index = LocalSearchIndex(tmp_path / "index", dimension=None)
        return subject.index

    subject.reopen = reopen
    yield subject
    subject.index.close()


SEARCH_INDEX_FACTORIES, SEARCH_INDEX_PARAMS = adapter_params(
    {"local": _local}, "SEARCH_INDEX_FACTORIES", needs=OPENSEARCH_MISSING
)
NO_KNN: frozenset[str] = aws_params.NO_KNN if aws_params else frozenset()


@pytest.fixture(params=SEARCH_INDEX_PARAMS)
def index_subject(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexSubject]:
    for made in SEARCH_INDEX_FACTORIES[request.param](tmp_path):
        subject = made if isinstance(made, IndexSubject) else IndexSubject(made)
        subject.knn = subject.knn and request.param not in NO_KNN
        yield subject


def vec(*hot: int, dim: int = DIM) -> list[float]:
    """A vector pointing at the given axes (cosine 1 with itself, 0 with disjoint axes)."""
    v = np.zeros(dim, dtype=np.float32)
    v[list(hot)] = 1.0
    return v.tolist()


def entry(
    chunk: str,
    text: str,
    *,
    doc: str = "doc-1",
    ws: str = WS,
    vector=None,
    category: str | None = None,
) -> IndexEntry:
    return IndexEntry(
        chunk_id=chunk,
        document_id=doc,
        workspace_id=ws,
        revision=1,
        text=text,
        category=category,
        vector=vector,
    )


def ids(hits) -> list[str]:
    return [h.chunk_id for h in hits]


ALL = SearchFilter(workspace_id=WS)


def test_keyword_hit_names_chunk_and_document(index_subject):
    index_subject.put(
        entry("c1", "The lighthouse keeper logs the weather", doc="d1"),
        entry("c2", "A recipe for bread", doc="d2"),
    )
    hits = index_subject.index.keyword_search("lighthouse", ALL, 10)
    assert [(h.chunk_id, h.document_id) for h in hits] == [("c1", "d1")]
    assert hits[0].score > 0


def test_reindexing_a_chunk_replaces_it(index_subject):
    index_subject.put(entry("c1", "apples and pears", vector=vec(0)))
    index_subject.put(entry("c1", "plums and cherries", vector=vec(1)))
    index_subject.put(entry("c1", "plums and cherries", vector=vec(1)))  # idempotent
    idx = index_subject.index
    assert idx.count(WS) == 1
    assert idx.keyword_search("apples", ALL, 10) == []
    assert ids(idx.keyword_search("cherries", ALL, 10)) == ["c1"]
    if index_subject.knn:
        assert ids(idx.vector_search(vec(1), ALL, 10)) == ["c1"]
        assert idx.vector_search(vec(1), ALL, 10)[0].score == pytest.approx(1.0, abs=1e-3)


def test_delete_document_and_chunks(index_subject):
    index_subject.put(
        entry("a1", "shared word alpha", doc="A", vector=vec(0)),
        entry("a2", "shared word beta", doc="A", vector=vec(1)),
        entry("b1", "shared word gamma", doc="B", vector=vec(2)),
        entry("b2", "shared word delta", doc="B", vector=vec(3)),
    )
    idx = index_subject.index
    idx.delete_document(WS, "A")
    index_subject.settle()
    assert sorted(ids(idx.keyword_search("shared", ALL, 10))) == ["b1", "b2"]
    if index_subject.knn:
        assert sorted(ids(idx.vector_search(vec(0, 1, 2, 3), ALL, 10))) == ["b1", "b2"]
    idx.delete_chunks(WS, ["b2", "no-such-chunk"])
    idx.delete_document(WS, "no-such-document")
    index_subject.settle()
    assert ids(idx.keyword_search("shared", ALL, 10)) == ["b1"]
    if index_subject.knn:
        assert ids(idx.vector_search(vec(0, 1, 2, 3), ALL, 10)) == ["b1"]
    assert idx.count(WS) == 1


def test_limit_caps_hits(index_subject):
    index_subject.put(*[entry(f"c{i}", f"common term {i}", vector=vec(i % DIM)) for i in range(12)])
    assert len(index_subject.index.keyword_search("common", ALL, 5)) == 5
    if index_subject.knn:
        assert len(index_subject.index.vector_search(vec(0), ALL, 5)) == 5
        keyword, vector = index_subject.index.hybrid_search("common", vec(0), ALL, 3)
        assert len(keyword) == 3
        assert len(vector) == 3


def test_category_filter_applies_inside_both_subqueries(index_subject):
    # 40 strong matches outside the category and 4 weak ones inside: a filter applied after
    # a top-k cut would return nothing; applied inside, it returns all four.
    many = [
        entry(f"x{i}", "salmon salmon salmon river", doc=f"dx{i}", vector=vec(0), category="fish")
        for i in range(40)
    ]
    few = [
        entry(
            f"y{i}",
            f"a note on salmon and item {i}",
            doc=f"dy{i}",
            vector=vec(0, 1 + i),
            category="notes",
        )
        for i in range(4)
    ]
    index_subject.put(*many, *few)
    only_notes = SearchFilter(workspace_id=WS, category="notes")
    idx = index_subject.index
    assert sorted(ids(idx.keyword_search("salmon", only_notes, 4))) == ["y0", "y1", "y2", "y3"]
    if index_subject.knn:
        assert sorted(ids(idx.vector_search(vec(0), only_notes, 4))) == ["y0", "y1", "y2", "y3"]
    assert len(idx.keyword_search("salmon", only_notes, 2)) == 2
    assert idx.keyword_search("salmon", SearchFilter(WS, category="none-such"), 10) == []


def test_document_filter_applies_inside_both_subqueries(index_subject):
    index_subject.put(
        *[
            entry(f"c{i}", "tidal energy report", doc=f"d{i}", vector=vec(i % DIM))
            for i in range(30)
        ]
    )
    chosen = SearchFilter(workspace_id=WS, document_ids=frozenset({"d3", "d17", "missing"}))
    idx = index_subject.index
    assert sorted(ids(idx.keyword_search("tidal", chosen, 10))) == ["c17", "c3"]
    none = SearchFilter(workspace_id=WS, document_ids=frozenset())
    assert idx.keyword_search("tidal", none, 10) == []
    if index_subject.knn:
        assert sorted(ids(idx.vector_search(vec(0), chosen, 10))) == ["c17", "c3"]
        assert idx.vector_search(vec(0), none, 10) == []


def test_workspaces_are_isolated(index_subject):
    index_subject.put(
        entry("mine", "confidential merger plan", doc="d", vector=vec(0)),
        entry("theirs", "confidential merger plan", doc="d", ws=OTHER_WS, vector=vec(0)),
    )
    idx = index_subject.index
    assert ids(idx.keyword_search("merger", ALL, 10)) == ["mine"]
    if index_subject.knn:
        assert ids(idx.vector_search(vec(0), ALL, 10)) == ["mine"]
    idx.delete_document(OTHER_WS, "d")
    index_subject.settle()
    assert ids(idx.keyword_search("merger", ALL, 10)) == ["mine"]
    assert idx.keyword_search("merger", SearchFilter(OTHER_WS), 10) == []
    assert idx.keyword_search("merger", SearchFilter("never-used-workspace"), 10) == []


def test_japanese_word_is_found_inside_running_text(index_subject):
    index_subject.put(
        entry("ja1", "全文検索エンジンを使って社内文書を探します。"),
        entry("ja2", "黒猫が窓辺で眠っている"),
        entry("ja3", "ＳＱＬｉｔｅのデータベースﾌｧｲﾙを開く"),
        entry("ja4", "明日は雨が降るでしょう"),
    )
    idx = index_subject.index
    assert ids(idx.keyword_search("検索", ALL, 10)) == ["ja1"]
    assert ids(idx.keyword_search("社内文書", ALL, 10)) == ["ja1"]
    assert ids(idx.keyword_search("猫", ALL, 10)) == ["ja2"]
    assert ids(idx.keyword_search("sqlite ファイル", ALL, 10)) == ["ja3"]
    assert idx.keyword_search("量子", ALL, 10) == []


def test_english_words_are_stemmed(index_subject):
    index_subject.put(
        entry("e1", "The runner was running through connected tunnels"),
        entry("e2", "Bread needs flour"),
    )
    idx = index_subject.index
    assert ids(idx.keyword_search("run", ALL, 10)) == ["e1"]
    assert ids(idx.keyword_search("connection tunnel", ALL, 10)) == ["e1"]
    assert ids(idx.keyword_search("RUNS", ALL, 10)) == ["e1"]


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "*",
        "NEAR(",
        "-",
        "AND",
        "OR",
        "NOT",
        "(",
        ")",
        "^",
        ":",
        "'",
        "\\",
        "%",
        "_",
        'body:"x"',
        "NEAR(a b, 3)",
        "a AND",
        "-dog",
        "dog*",
        '"dog',
        "dog OR",
        "\x00",
        "🙂",
    ],
)
def test_hostile_queries_neither_fail_nor_inject(index_subject, query):
    index_subject.put(entry("d1", "dog house"), entry("c1", "cat flap"))
    hits = index_subject.index.keyword_search(query, ALL, 10)
    # Only a literal "dog" in the query may match, and only the dog chunk.
    assert set(ids(hits)) <= {"d1"}
    assert bool(hits) == ("dog" in query.lower())


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "!!!", "。、！？", "--- ***"])
def test_blank_or_punctuation_query_gives_no_keyword_hits(index_subject, query):
    index_subject.put(entry("c1", "anything at all", vector=vec(0)))
    assert index_subject.index.keyword_search(query, ALL, 10) == []
    if index_subject.knn:
        keyword, vector = index_subject.index.hybrid_search(query, vec(0), ALL, 10)
        assert keyword == []
        assert ids(vector) == ["c1"]


def test_keyword_scores_are_positive_and_best_first(index_subject):
    index_subject.put(
        entry("many", "orchid orchid orchid greenhouse"),
        entry("once", "a greenhouse with one orchid and many other plants"),
        *[entry(f"f{i}", f"greenhouse filler text number {i}") for i in range(8)],
    )
    hits = index_subject.index.keyword_search("orchid", ALL, 10)
    assert ids(hits) == ["many", "once"]
    assert hits[0].score > hits[1].score > 0


def test_keyword_weight_is_the_idf_mass_of_the_query(index_subject):
    """BM25 / keyword_weight is an absolute coverage: a hit holding every query term once
    scores about 1, one holding a rare half of the query scores well below, and a word no
    chunk holds weighs most (so nonsense dilutes coverage instead of vanishing)."""
    index_subject.put(
        entry("both", "orchid greenhouse"),
        entry("rare", "orchid"),
        *[entry(f"f{i}", f"greenhouse filler {i}") for i in range(8)],
    )
    weight = index_subject.index.keyword_weight("orchid greenhouse", ALL)
    assert weight > 0
    scores = {
        h.chunk_id: h.score
        for h in index_subject.index.keyword_search("orchid greenhouse", ALL, 20)
    }
    assert 0.6 < scores["both"] / weight <= 1.5
    assert scores["f0"] / weight < 0.35  # the common half of the query only
    nonsense = index_subject.index.keyword_weight("orchid zzqxjv", ALL)
    assert nonsense > index_subject.index.keyword_weight("orchid", ALL)
    assert index_subject.index.keyword_weight("zzqxjv", ALL) > index_subject.index.keyword_weight(
        "greenhouse", ALL
    )
    assert index_subject.index.keyword_weight("", ALL) == 0.0
    assert index_subject.index.keyword_weight("orchid", SearchFilter(workspace_id=OTHER_WS)) >= 0


def test_vector_scores_are_cosine_best_first(index_subject):
    index_subject.needs_knn()
    index_subject.put(
        entry("same", "x", vector=vec(0)),
        entry("near", "y", vector=[1, 1, 0, 0, 0, 0, 0, 0]),
        entry("far", "z", vector=vec(5)),
    )
    hits = index_subject.index.vector_search([2, 0, 0, 0, 0, 0, 0, 0], ALL, 3)
    assert ids(hits) == ["same", "near", "far"]
    assert [h.score for h in hits] == pytest.approx([1.0, 2**-0.5, 0.0], abs=2e-3)


def test_zero_or_missing_query_vector_gives_no_vector_hits(index_subject):
    index_subject.put(entry("c1", "text", vector=vec(0)))
    assert index_subject.index.vector_search([0.0] * DIM, ALL, 10) == []
    keyword, vector = index_subject.index.hybrid_search("text", None, ALL, 10)
    assert ids(keyword) == ["c1"]
    assert vector == []


def test_entries_without_vectors_are_keyword_only(index_subject):
    index_subject.put(
        entry("kw", "keyword only chunk"), entry("both", "keyword chunk", vector=vec(0))
    )
    if index_subject.knn:
        assert ids(index_subject.index.vector_search(vec(0), ALL, 10)) == ["both"]
    assert sorted(ids(index_subject.index.keyword_search("keyword", ALL, 10))) == ["both", "kw"]


def test_vector_of_another_dimension_is_rejected(index_subject):
    index_subject.put(entry("c1", "first", vector=vec(0)))
    with pytest.raises(ValidationError, match="dimension"):
        index_subject.index.index([entry("c2", "second", vector=[1.0, 0.0, 0.0])])
    with pytest.raises(ValidationError, match="dimension"):
        index_subject.index.vector_search([1.0, 0.0], ALL, 10)
    assert index_subject.index.count(WS) == 1
    assert index_subject.index.dimension == DIM


def test_count_and_clear(index_subject):
    index_subject.put(
        entry("a", "one", vector=vec(0)),
        entry("b", "two"),
        entry("c", "three", ws=OTHER_WS, vector=vec(1)),
    )
    idx = index_subject.index
    assert (idx.count(WS), idx.count(OTHER_WS), idx.count()) == (2, 1, 3)
    idx.clear(WS)
    index_subject.settle()
    assert (idx.count(WS), idx.count(OTHER_WS), idx.count()) == (0, 1, 1)
    assert idx.keyword_search("one", ALL, 10) == []
    if index_subject.knn:
        assert idx.vector_search(vec(0), ALL, 10) == []
    assert ids(idx.keyword_search("three", SearchFilter(OTHER_WS), 10)) == ["c"]
    idx.clear()
    index_subject.settle()
    assert idx.count() == 0
    index_subject.put(entry("a", "one again", vector=vec(0)))
    assert ids(idx.keyword_search("one", ALL, 10)) == ["a"]


def test_data_survives_a_restart(index_subject):
    if index_subject.reopen is None:
        pytest.skip("this adapter keeps nothing across restarts")
    index_subject.put(
        entry("c1", "durable 全文検索", doc="d1", vector=vec(0), category="k"),
        entry("c2", "durable text", doc="d2", vector=vec(1)),
    )
    index_subject.index.delete_chunks(WS, ["c2"])
    idx = index_subject.reopen()
    assert idx.count(WS) == 1
    assert idx.dimension == DIM
    assert ids(idx.keyword_search("検索", SearchFilter(WS, category="k"), 10)) == ["c1"]
    assert ids(idx.vector_search(vec(0, 1), ALL, 10)) == ["c1"]
    index_subject.put(entry("c3", "durable again", doc="d3", vector=vec(2)))
    assert sorted(ids(idx.keyword_search("durable", ALL, 10))) == ["c1", "c3"]
