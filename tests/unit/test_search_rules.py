"""SearchService's own rules, on small fakes of its ports (tests/fakes.py): what it asks the
index, how it drops stale hits, thresholds, grouping and limits. The engines themselves are
under tests/contract."""

from __future__ import annotations

import numpy as np
import pytest

from bunko.domain import Chunk, Document
from bunko.ports import IndexEntry
from bunko.services.embedding import shared_generation
from bunko.services.search.relevance_gate import GATE_WINDOW
from bunko.services.search.search import SearchOptions, SearchService
from bunko.services.search.search_items import MAX_JOINED_CHUNKS
from tests.fakes import FakeEmbedder, FakeMetadataStore, FakeSearchDefaults, FakeSearchIndex

WS, OTHER = "ws-1", "ws-2"
WORDS = ["tea", "kettle", "bicycle", "glacier", "ice"]


class World:
    def __init__(
        self,
        *,
        embedder: FakeEmbedder | None = None,
        metadata: FakeMetadataStore | None = None,
        index: FakeSearchIndex | None = None,
    ) -> None:
        self.metadata = FakeMetadataStore() if metadata is None else metadata
        dimension = embedder.dimension if embedder else None
        self.index = FakeSearchIndex(dimension=dimension) if index is None else index
        self.embedder = embedder
        self.service = SearchService(
            metadata=self.metadata,
            generations=shared_generation(self.index, embedder),
            candidates=20,
        )

    def add(self, doc_id: str, *texts: str, ws: str = WS, category: str | None = None) -> None:
        doc = Document(
            id=doc_id,
            workspace_id=ws,
            path=f"{doc_id}.txt",
            name=f"{doc_id}.txt",
            mime="text/plain",
            category=category,
        )
        self.metadata.add_document(doc)
        chunks = [
            Chunk(
                id=f"{doc_id}#{i}",
                document_id=doc_id,
                workspace_id=ws,
                revision=1,
                index=i,
                content=text,
            )
            for i, text in enumerate(texts)
        ]
        self.metadata.replace_chunks(ws, doc_id, chunks)
        vectors = self.embedder.embed_documents(texts) if self.embedder else [None] * len(texts)
        self.index.index(
            [
                IndexEntry(c.id, doc_id, ws, 1, c.content, category, v)
                for c, v in zip(chunks, vectors, strict=True)
            ]
        )

    def search(self, query: str, **options) -> list[tuple[str, str]]:
        result = self.service.search(WS, query, SearchOptions(min_score=0.0, **options))
        return [(item.document_id, item.content) for item in result.items]


def test_blank_queries_and_zero_limits_do_not_reach_the_index():
    world = World()
    world.add("d1", "tea kettle")
    for query, limit in [("", 5), ("   ", 5), ("tea", 0)]:
        assert world.service.search(WS, query, SearchOptions(limit=limit)).items == []
    assert world.index.searches == []


def test_unknown_fusion_method_is_refused():
    with pytest.raises(ValueError, match="fusion"):
        World().service.search(WS, "tea", SearchOptions(method="magic"))
    with pytest.raises(ValueError, match="fusion"):
        SearchService(
            metadata=FakeMetadataStore(),
            generations=shared_generation(FakeSearchIndex(), None),
            method="magic",
        )


def test_filters_and_candidate_count_go_to_the_engine():
    world = World()
    world.add("d1", "tea kettle", category="kitchen")
    world.service.search(
        WS, "tea", SearchOptions(limit=10, category="kitchen", document_ids=frozenset({"d1"}))
    )
    ((query, with_vector, filters, fetch),) = world.index.searches
    assert (query, with_vector, fetch) == ("tea", False, 40)  # max(candidates, limit * 4)
    assert (filters.workspace_id, filters.category, filters.document_ids) == (
        WS,
        "kitchen",
        frozenset({"d1"}),
    )


def test_stale_index_entries_and_deleted_documents_never_come_back():
    world = World()
    world.add("d1", "tea kettle")
    world.add("d2", "tea pot")
    world.add("d3", "tea leaves")
    world.metadata.replace_chunks(WS, "d2", [])  # the index still holds d2's chunk
    del world.metadata.documents["d3"]  # and d3's, whose document is gone
    assert [doc for doc, _ in world.search("tea")] == ["d1"]


class ReadsRecorded(FakeMetadataStore):
    """The fake store, recording each batch read a search makes (what, how many)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, int]] = []

    def get_chunks_by_ids(self, workspace_id, chunk_ids):
        self.reads.append(("chunks", len(chunk_ids)))
        return super().get_chunks_by_ids(workspace_id, chunk_ids)

    def get_documents_by_ids(self, workspace_id, document_ids):
        self.reads.append(("documents", len(document_ids)))
        return super().get_documents_by_ids(workspace_id, document_ids)


def test_a_page_reads_only_its_own_documents_hits_and_fills_stale_gaps():
    world = World(metadata=ReadsRecorded())
    world.service.candidates = 200
    for n in range(40):  # each document: two hits, the first stronger
        world.add(f"d{n:02d}", "tea kettle " + "tea " * (40 - n), f"tea {n}")
    reads = world.metadata.reads
    reads.clear()  # what adding the documents read
    page = world.search("tea kettle", limit=5)
    assert [doc for doc, _ in page] == ["d00", "d01", "d02", "d03", "d04"]
    assert all("\n…\n" in content for _, content in page)  # both hits joined, as before
    # the relevance gate reads the best GATE_WINDOW hits' chunks once (not all 80); the page
    # reads only its documents' hits past the window (their weaker second chunks)
    assert reads == [("chunks", GATE_WINDOW), ("chunks", 5), ("documents", 5)]

    reads.clear()
    del world.metadata.documents["d01"]  # stale: the index still has d01 and d03's chunks
    world.metadata.replace_chunks(WS, "d03", [])
    page = world.search("tea kettle", limit=5)
    assert [doc for doc, _ in page] == ["d00", "d02", "d04", "d05", "d06"]
    assert reads[0] == ("chunks", GATE_WINDOW)
    assert sum(n for kind, n in reads if kind == "chunks") < GATE_WINDOW + 10

    flat = world.search("tea kettle", limit=3, group_by_document=False)
    assert [doc for doc, _ in flat] == ["d00", "d02", "d04"]


def test_other_workspaces_stay_out():
    world = World()
    world.add("mine", "tea kettle")
    world.add("theirs", "tea kettle", ws=OTHER)
    assert [doc for doc, _ in world.search("tea kettle")] == ["mine"]


def test_min_score_drops_weak_hits():
    world = World()
    world.add("both", "tea kettle")
    world.add("one", "tea only")
    scored = world.service.search(WS, "tea kettle", SearchOptions(min_score=0.0)).items
    assert [i.document_id for i in scored] == ["both", "one"]
    assert all(0.0 <= i.similarity <= 1.0 for i in scored)
    between = (scored[0].similarity + scored[1].similarity) / 2
    strong = world.service.search(WS, "tea kettle", SearchOptions(min_score=between))
    assert [i.document_id for i in strong.items] == ["both"]


def test_grouping_joins_a_documents_best_chunks_in_reading_order():
    world = World()
    texts = [f"tea part{i}" if i % 2 else f"tea kettle part{i}" for i in range(6)]
    world.add("long", *texts)
    world.add("short", "tea")
    ((doc, content), (other, _)) = world.search("tea kettle", limit=2)
    assert (doc, other) == ("long", "short")
    joined = content.split("\n…\n")
    assert len(joined) == MAX_JOINED_CHUNKS
    assert joined == sorted(joined, key=lambda t: int(t.rsplit("part", 1)[1]))


def test_without_grouping_each_chunk_is_a_hit_up_to_the_limit():
    world = World()
    world.add("long", *[f"tea kettle {i}" for i in range(6)])
    hits = world.search("tea kettle", limit=4, group_by_document=False)
    assert len(hits) == 4 and {doc for doc, _ in hits} == {"long"}
    assert all("\n…\n" not in content for _, content in hits)


def test_keyword_method_never_embeds_and_vector_method_sends_no_text():
    world = World(embedder=FakeEmbedder(WORDS))
    world.add("d1", "glacier ice")
    world.service.search(WS, "ice", SearchOptions(method="keyword", min_score=0.0))
    world.service.search(WS, "ice", SearchOptions(method="vector", min_score=0.0))
    assert [(q, v) for q, v, _, _ in world.index.searches] == [("ice", False), ("", True)]


def test_vector_search_used_says_whether_vectors_matched():
    world = World(embedder=FakeEmbedder(WORDS))
    world.add("d1", "glacier ice")
    found = world.service.search(WS, "glacier", SearchOptions(min_score=0.0))
    assert found.vector_search_used and found.items[0].vector_score > 0
    unknown = world.service.search(WS, "volcano", SearchOptions(min_score=0.0))
    assert not unknown.vector_search_used  # a zero query vector is no vector at all


def test_query_vector_is_none_without_a_usable_embedder():
    assert World().service.query_vector("tea") is None
    world = World(embedder=FakeEmbedder(WORDS))
    assert world.service.query_vector("nothing known") is None
    assert np.isclose(np.linalg.norm(world.service.query_vector("tea")), 1.0)


def test_search_safely_turns_engine_failures_into_an_error_field():
    class BrokenIndex(FakeSearchIndex):
        def hybrid_search(self, query, vector, filters, limit):
            raise ConnectionError("engine down")

    service = SearchService(
        metadata=FakeMetadataStore(), generations=shared_generation(BrokenIndex(), None)
    )
    result = service.search_safely(WS, "tea", SearchOptions())
    assert result.items == [] and "engine down" in result.error
    assert result.to_dict()["items"] == []


def test_options_left_out_come_from_the_workspaces_saved_settings():
    saved = FakeSearchDefaults({WS: (2, 0.0), OTHER: (7, 0.9)}, fallback=(5, 0.3))
    service = SearchService(
        metadata=FakeMetadataStore(),
        generations=shared_generation(FakeSearchIndex(), None),
        limit=4,
        min_score=0.5,
        saved_defaults=saved,
    )
    resolved = service.resolve(WS, SearchOptions())
    assert (resolved.limit, resolved.min_score) == (2, 0.0)
    assert service.resolve(OTHER, SearchOptions(limit=3)).limit == 3  # the caller's value wins
    assert service.resolve(OTHER, SearchOptions(limit=3)).min_score == 0.9
    unsaved = SearchService(
        metadata=FakeMetadataStore(),
        generations=shared_generation(FakeSearchIndex(), None),
        limit=4,
        min_score=0.5,
    )
    assert unsaved.resolve(WS, SearchOptions()) == SearchOptions(limit=4, min_score=0.5)


def test_search_uses_the_saved_limit():
    world = World()
    world.add("d1", "tea one")
    world.add("d2", "tea two")
    world.add("d3", "tea three")
    world.service.saved_defaults = FakeSearchDefaults({WS: (2, 0.0)}, fallback=(5, 0.3))
    assert len(world.service.search(WS, "tea", SearchOptions()).items) == 2


class WeightUnavailable(FakeSearchIndex):
    def keyword_weight(self, query, filters):
        raise RuntimeError("_analyze answered 503")


def test_a_failing_keyword_weight_does_not_fail_the_search():
    """On AWS the weight is an `_analyze` and an `_msearch` of counts: either failing made
    the whole search fail. The hits keep their ranks; the gate judges them without it."""
    world = World(index=WeightUnavailable())
    world.add("d1", "tea kettle")
    world.add("d2", "coffee pot")
    assert [doc for doc, _ in world.search("tea kettle")] == ["d1"]


def test_a_query_over_the_bound_is_refused_whatever_door_it_came_through():
    """Issue 33: a 3 MB question reached the embedder through /v1's content parts. The
    search service bounds every query, so no door can hand the embedder such a text."""
    from bunko.errors import ValidationError
    from bunko.services.search.search import MAX_QUERY_CHARS

    world = World()
    world.add("d1", "tea kettle")
    longest = ("tea kettle " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
    assert [doc for doc, _ in world.search(longest)] == ["d1"]
    with pytest.raises(ValidationError, match=f"at most {MAX_QUERY_CHARS} characters"):
        world.service.search(WS, longest + "x", SearchOptions())
