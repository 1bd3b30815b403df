"""A large new file is keyword-searchable as soon as it is parsed, while its vectors are
computed: it stays `indexing`, search reports its hits as found by the keyword engine alone
(and judges them by their keyword coverage, since their cosine is missing, not 0), and a file
whose embedding then fails is taken back out of the index."""

from __future__ import annotations

from bunko.domain import DocumentStatus
from bunko.ports import SearchFilter
from bunko.services.embedding import shared_generation
from bunko.services.ingest.pipeline import EARLY_KEYWORD_CHUNKS
from bunko.services.search.calibration import Calibration
from bunko.services.search.search import SearchOptions, SearchService
from tests.fakes import FakeEmbedder, PipelineWorld

WS = "ws-1"
WORDS = ["alpha", "bravo", "golf", "hotel", "kilo"]
BIG = "golf hotel kilo. " * 4 * EARLY_KEYWORD_CHUNKS  # 40-character chunks: many of them
# A model whose similarity leans on the cosine: a keyword hit without a vector scores ~0.
COSINE_LED = Calibration(cosine=10.0, coverage=0.0, background=0.0, product=0.0, bias=-5.0)


class Watching(FakeEmbedder):
    """Searches while it embeds, as a user would while a big file is being indexed."""

    def __init__(self, fail_on: str | None = None) -> None:
        super().__init__(WORDS)
        self.fail_on, self.search, self.seen = fail_on, None, []

    def embed_documents(self, texts):
        if self.search is not None:
            self.seen.append(self.search())
        if self.fail_on and any(self.fail_on in t for t in texts):
            raise RuntimeError("the embedding service answered 500")
        return super().embed_documents(texts)


class World(PipelineWorld):
    def __init__(self, embedder: Watching) -> None:
        super().__init__(embedder)
        self.search = SearchService(
            metadata=self.metadata,
            generations=shared_generation(self.index, embedder),
            calibration=COSINE_LED,
        )

    def run(self, **texts: str) -> None:
        for name, text in texts.items():
            self.ingest.submit_text(WS, path=f"{name}.txt", content=text)
        self.pipeline.process(self.take_jobs())

    def found(self, query: str) -> dict[str, tuple[list[str], DocumentStatus]]:
        items = self.search.search(WS, query, SearchOptions(limit=10, min_score=0.3)).items
        return {
            i.path: (i.engines, self.metadata.get_document(WS, i.document_id).status) for i in items
        }


def test_a_big_new_file_is_keyword_searchable_while_its_vectors_are_computed():
    world = World(Watching())
    world.run(small="alpha bravo golf. " * 3)  # a file with vectors, so the search is hybrid
    world.embedder.search = lambda: world.found("golf hotel kilo")
    world.run(big=BIG, other="hotel kilo alpha. " * 3)
    during = world.embedder.seen[0]  # the first batch of the big file's vectors
    assert during["big.txt"] == (["keyword"], DocumentStatus.INDEXING)
    assert "other.txt" not in during  # a small file waits for its vectors, as before
    after = world.found("golf hotel kilo")
    assert after["big.txt"] == (["keyword", "vector"], DocumentStatus.COMPLETED)
    assert world.index.count(WS) == world.metadata.count_chunks(WS)


def test_a_big_file_whose_embedding_fails_is_taken_back_out():
    world = World(Watching(fail_on="golf hotel kilo"))
    world.run(small="alpha bravo golf. " * 3)
    world.embedder.search = lambda: world.found("golf hotel kilo")
    world.run(big=BIG)
    assert "big.txt" in world.embedder.seen[0]
    big = world.metadata.get_document_by_path(WS, "big.txt")
    assert big.status is DocumentStatus.FAILED
    assert big.error == "embedding: the embedding service answered 500"
    assert world.metadata.get_chunks(WS, big.id) == []
    assert "big.txt" not in world.found("golf hotel kilo")
    assert world.index.count(WS) == world.metadata.count_chunks(WS)


def test_a_file_with_chunks_keeps_them_until_its_new_revision_is_complete():
    world = World(Watching(fail_on="golf hotel kilo"))
    world.run(doc="alpha bravo. " * 3)
    world.run(doc=BIG)  # a new revision that fails: the old text stays searchable
    doc = world.metadata.get_document_by_path(WS, "doc.txt")
    assert doc.status is DocumentStatus.FAILED and doc.revision == 2
    assert "doc.txt" in world.found("alpha bravo") and "doc.txt" not in world.found("kilo")


def test_a_big_file_deleted_while_its_embedding_fails_leaves_nothing_and_stops_nothing():
    embedder = Watching(fail_on="golf hotel kilo")
    world = World(embedder)

    def delete_it():
        doc = world.metadata.get_document_by_path(WS, "big.txt")
        if doc is not None:
            world.ingest.delete_document(WS, doc.id)
        return {}

    embedder.search = delete_it
    world.run(big=BIG, other="alpha bravo. " * 3)  # other: a later group, still written
    assert world.metadata.get_document_by_path(WS, "big.txt") is None
    other = world.metadata.get_document_by_path(WS, "other.txt")
    assert other.status is DocumentStatus.COMPLETED
    assert world.index.count(WS) == world.metadata.count_chunks(WS) == other.chunk_count


def test_a_keywords_first_rebuild_finds_every_chunk_by_its_words_before_any_vector():
    world = World(Watching())
    world.run(**{f"d{n}": f"{WORDS[n % 5]} kilo number{n} here. " * 3 for n in range(12)})
    everything = SearchFilter(workspace_id=WS)
    seen = []
    world.embedder.search = lambda: (
        seen.append({e.chunk_id for e in world.index.entries.values() if e.vector is None}) or {}
    )
    total = world.pipeline.reindex(keywords_first=True)
    assert total == world.metadata.count_chunks(WS)
    # At the first vector batch every chunk was already there, by its words alone.
    assert seen and seen[0] == {c.id for c in world.metadata.iter_chunks(WS)}
    d11 = world.metadata.get_document_by_path(WS, "d11.txt")
    assert {h.document_id for h in world.index.keyword_search("number11", everything, 10)} == {
        d11.id
    }
    assert all(e.vector is not None for e in world.index.entries.values())  # then vectors
