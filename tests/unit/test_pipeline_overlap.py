"""IndexingPipeline embeds one batch of chunks in a thread while it prepares the next
documents and writes the documents already embedded: batches are exactly `batch_size` chunks
across documents, every chunk still gets its own vector, a failed embedding fails only the
documents in its batch, and documents are written while a later batch embeds."""

from __future__ import annotations

import time

import numpy as np

from bunko.domain import DocumentStatus
from tests.fakes import FakeBlobStore, FakeEmbedder, PipelineWorld

WS = "ws-1"
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "poison"]


class World(PipelineWorld):
    def submit(self, count: int, text=lambda n: f"{WORDS[n % 8]} {WORDS[(n + 3) % 8]} words"):
        docs = [
            self.ingest.submit_text(WS, path=f"d{n}.txt", content=f"{text(n)}. " * 3)
            for n in range(count)
        ]
        return docs, self.take_jobs()


def test_every_chunk_gets_its_own_vector_across_groups():
    embedder = FakeEmbedder(WORDS)
    world = World(embedder, batch_size=3)
    docs, jobs = world.submit(20)
    finished = world.pipeline.process(jobs)
    assert sorted(d.id for d in finished) == sorted(d.id for d in docs)
    assert all(d.status is DocumentStatus.COMPLETED for d in finished)
    chunks = [c for d in docs for c in world.metadata.get_chunks(WS, d.id)]
    assert len(chunks) > 3 * 3  # several groups
    for chunk in chunks:
        entry = world.index.entries[chunk.id]
        assert entry.text == chunk.content
        np.testing.assert_allclose(entry.vector, embedder.embed_documents([chunk.content])[0])


class ReadingOriginals(FakeBlobStore):
    """The blob store, recording the keys read: the pipeline reads a document's original to
    parse it, and chunks it in the same thread before it looks at the embedder again."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()

    def get(self, key: str) -> bytes:
        found = super().get(key)
        self.read.add(key)
        return found


class Recording(FakeEmbedder):
    """Records its batches; the first one lasts until every document is parsed, as a slow
    model's would, so the batches after it are made while the embedder is busy."""

    def __init__(self, vocabulary, world_ref) -> None:
        super().__init__(vocabulary)
        self.world_ref, self.calls, self.waited = world_ref, [], False

    def embed_documents(self, texts):
        self.calls.append(len(texts))
        world, deadline = self.world_ref[0], time.monotonic() + 30
        while len(self.calls) == 1 and time.monotonic() < deadline:
            if len(world.blobs.read) == len(list(world.metadata.iter_documents(WS))):
                self.waited = True  # every original read while this first batch embeds
                break
            time.sleep(0.01)
        return super().embed_documents(texts)


def test_batches_are_exact_across_documents_while_the_embedder_is_busy():
    ref: list[World] = []
    embedder = Recording(WORDS, ref)
    world = World(embedder, batch_size=4, blobs=ReadingOriginals())
    ref.append(world)
    _, jobs = world.submit(9, text=lambda n: f"{WORDS[n % 8]} words. " * (1 + 40 * (n % 3)))
    world.pipeline.process(jobs)
    docs = list(world.metadata.iter_documents(WS))
    chunks = sum(d.chunk_count for d in docs)
    assert chunks > 4 * 4 and any(d.chunk_count % 4 for d in docs)
    assert all(d.status is DocumentStatus.COMPLETED for d in docs)
    # The first document's chunks went to the idle embedder at once; after that, only the
    # last batch is short: no document ends with a small batch of its own.
    assert embedder.waited  # the batches after the first were made while it embedded
    first, *middle, last = embedder.calls
    assert first == world.metadata.get_document_by_path(WS, "d0.txt").chunk_count
    assert middle == [4] * len(middle) and 0 < last <= 4
    assert sum(embedder.calls) == chunks


def test_the_documents_of_a_batch_are_written_together():
    ref: list[World] = []
    embedder = Recording(WORDS, ref)
    world = World(embedder, batch_size=64, blobs=ReadingOriginals())
    ref.append(world)
    calls: list[set[str]] = []
    index = world.index.index
    world.index.index = lambda entries: (
        calls.append({e.document_id for e in entries}),
        index(entries),
    )
    docs, jobs = world.submit(20)
    world.pipeline.process(jobs)
    # Two batches (d0 went to the idle embedder alone, the other 19 waited for it): at most two
    # index calls, never one a document.
    assert embedder.waited and len(calls) <= 2 and sum(len(c) for c in calls) == 20
    assert set().union(*calls) == {d.id for d in docs}
    assert all(d.status is DocumentStatus.COMPLETED for d in world.metadata.iter_documents(WS))


class FailingOn(FakeEmbedder):
    def embed_documents(self, texts):
        if any("poison" in t for t in texts):
            raise RuntimeError("the embedding service answered 500")
        return super().embed_documents(texts)


def test_a_failed_embedding_fails_only_the_documents_in_its_batch():
    world = World(FailingOn(WORDS), batch_size=2)
    docs, jobs = world.submit(12, text=lambda n: "poison pill" if n == 7 else WORDS[n % 8])
    world.pipeline.process(jobs)
    statuses = {d.path: world.metadata.get_document(WS, d.id).status for d in docs}
    failed = [p for p, s in statuses.items() if s is DocumentStatus.FAILED]
    assert "d7.txt" in failed and len(failed) < len(docs) // 2, statuses
    assert all(s is DocumentStatus.COMPLETED for p, s in statuses.items() if p not in failed)
    error = world.metadata.get_document_by_path(WS, "d7.txt").error
    assert error == "embedding: the embedding service answered 500"


class WaitsForEarlierWrites(FakeEmbedder):
    """Embeds a batch only once some earlier batch's documents are written: impossible
    unless writing overlaps embedding."""

    def __init__(self, vocabulary, world_ref) -> None:
        super().__init__(vocabulary)
        self.world_ref, self.calls, self.waited = world_ref, 0, []

    def embed_documents(self, texts):
        self.calls += 1
        if self.calls > 1:
            world, deadline = self.world_ref[0], time.monotonic() + 30
            while not self._earlier_written(world) and time.monotonic() < deadline:
                time.sleep(0.01)
            self.waited.append(self._earlier_written(world))
        return super().embed_documents(texts)

    @staticmethod
    def _earlier_written(world) -> bool:
        return any(d.status is DocumentStatus.COMPLETED for d in world.metadata.iter_documents())


def test_documents_are_written_while_a_later_batch_embeds():
    ref: list[World] = []
    embedder = WaitsForEarlierWrites(WORDS, ref)
    world = World(embedder, batch_size=4)
    ref.append(world)
    _, jobs = world.submit(10)
    world.pipeline.process(jobs)
    assert embedder.calls >= 2 and all(embedder.waited), embedder.waited
