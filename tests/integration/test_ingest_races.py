"""Races between writers and the indexing worker, made deterministic: a SearchIndex wrapper
runs the racing write at the moment the worker writes its entries, against real SQLite and
the real local index. Nothing may be stuck, lost, or come back."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from bunko.adapters.collecting_queue import CollectingQueue
from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.errors import NotFoundError
from bunko.ports import IndexEntry
from bunko.services.embedding import shared_generation
from bunko.services.ingest import Upload
from bunko.services.ingest.ingest import IngestService
from bunko.services.ingest.pipeline import IndexingPipeline
from bunko.services.library import original_key
from bunko.services.search.search import SearchOptions


class RacingIndex:
    """The real index, with `before(entries)` run just before the worker's entries land."""

    def __init__(self, index, before: Callable[[Sequence[IndexEntry]], None]) -> None:
        self._index, self._before = index, before

    def index(self, entries: Sequence[IndexEntry]) -> None:
        self._before(entries)
        self._index.index(entries)

    def __getattr__(self, name: str):
        return getattr(self._index, name)


def _services(tmp_path):
    from bunko.bootstrap import build_services
    from bunko.config import Settings

    queue = CollectingQueue()
    return build_services(Settings(data_dir=tmp_path, embedder="none"), queue=queue), queue


def _pipeline(services, before) -> IndexingPipeline:
    return IndexingPipeline(
        metadata=services.metadata,
        blobs=services.blobs,
        generations=shared_generation(RacingIndex(services.index, before), None),
    )


def _hits(services, query: str) -> list[str]:
    found = services.search.search(WS, query, SearchOptions(min_score=0)).items
    return [hit.document_id for hit in found]


def test_a_delete_while_indexing_leaves_the_rest_of_the_batch_completed(tmp_path):
    services, queue = _services(tmp_path)
    try:
        docs = [
            services.ingest.submit(Upload(WS, f"{n} lighthouse keeper".encode(), path=f"{n}.txt"))
            for n in ("first", "doomed", "last")
        ]
        doomed = docs[1]

        def delete_doomed(entries: Sequence[IndexEntry]) -> None:
            # The documents are written together: the delete lands as their entries do.
            mine = any(e.document_id == doomed.id for e in entries)
            if mine and services.metadata.get_document(WS, doomed.id) is not None:
                services.ingest.delete_document(WS, doomed.id)

        finished = _pipeline(services, delete_doomed).process(queue.take())
        assert {d.id for d in finished} == {docs[0].id, docs[2].id}
        assert services.metadata.get_document(WS, doomed.id) is None
        for doc in (docs[0], docs[2]):
            assert services.metadata.get_document(WS, doc.id).status is DocumentStatus.COMPLETED
        # The index agrees with metadata: nothing of the deleted document was left behind.
        assert services.index.count(WS) == services.metadata.count_chunks(WS) == 2
        assert doomed.id not in _hits(services, "lighthouse keeper")
    finally:
        services.close()


def test_a_new_revision_while_the_old_one_is_indexed_is_never_rolled_back(tmp_path):
    services, queue = _services(tmp_path)
    try:
        first = services.ingest.submit(Upload(WS, b"old text about whales", path="notes.txt"))

        def replace_now(entries: Sequence[IndexEntry]) -> None:
            if entries and entries[0].revision == 1:
                services.ingest.submit(Upload(WS, b"new text about owls", path="notes.txt"))

        pipeline = _pipeline(services, replace_now)
        assert pipeline.process(queue.take()) == []  # the old revision's work is dropped
        doc = services.metadata.get_document(WS, first.id)
        assert doc.revision == 2 and doc.status is DocumentStatus.PENDING
        finished = pipeline.process(queue.take())
        assert [(d.revision, d.status) for d in finished] == [(2, DocumentStatus.COMPLETED)]
        doc = services.metadata.get_document(WS, first.id)
        assert (doc.revision, doc.status) == (2, DocumentStatus.COMPLETED)
        chunks = services.metadata.get_chunks(WS, doc.id)
        assert [c.content for c in chunks] == ["new text about owls"]
        assert services.index.count(WS) == 1
        assert _hits(services, "owls") == [doc.id] and _hits(services, "whales") == []
    finally:
        services.close()


def test_a_failure_recorded_for_an_old_revision_never_hides_the_new_one(tmp_path):
    services, queue = _services(tmp_path)
    try:
        first = services.ingest.submit(Upload(WS, b"%PDF-1.4 broken", path="r.pdf"))
        second = services.ingest.submit(Upload(WS, b"%PDF-1.4 broken again", path="r.pdf"))
        assert second.revision == 2
        jobs = queue.take()
        # The worker took revision 1's job before revision 2 arrived.
        services.pipeline.process(jobs[:1])
        doc = services.metadata.get_document(WS, first.id)
        assert doc.revision == 2 and doc.status is DocumentStatus.PENDING
        services.pipeline.process(jobs[1:])
        doc = services.metadata.get_document(WS, first.id)
        assert doc.revision == 2 and doc.status is DocumentStatus.FAILED
    finally:
        services.close()


def test_concurrent_writers_to_one_path_each_get_a_revision(tmp_path):
    services, queue = _services(tmp_path)
    try:
        services.ingest.submit(Upload(WS, b"version zero", path="shared.txt"))
        texts = [f"version {n} of the shared notes".encode() for n in range(1, 9)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            done = list(
                pool.map(lambda t: services.ingest.submit(Upload(WS, t, path="shared.txt")), texts)
            )
        revisions = sorted(d.revision for d in done)
        assert revisions == list(range(2, 10))  # none lost, none written twice
        doc = services.metadata.get_document_by_path(WS, "shared.txt")
        stored = services.metadata.list_revisions(WS, doc.id)
        assert sorted(r.revision for r in stored) == list(range(1, 10))
        for revision in stored:  # each revision's original holds the bytes its hash names
            data = services.blobs.get(revision.blob_key)
            assert hashlib.sha256(data).hexdigest() == revision.content_hash
        services.pipeline.process(queue.take())
        doc = services.metadata.get_document(WS, doc.id)
        assert (doc.revision, doc.status) == (9, DocumentStatus.COMPLETED)
        assert services.metadata.count_chunks(WS) == services.index.count(WS) == 1
    finally:
        services.close()


class DeletingBlobs:
    """The real blob store, with `before(key)` run just before an original is written."""

    def __init__(self, blobs, before: Callable[[str], None]) -> None:
        self._blobs, self._before = blobs, before

    def put(self, key: str, data: bytes, **kwargs) -> None:
        self._before(key)
        self._blobs.put(key, data, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._blobs, name)


def test_a_replace_racing_a_delete_is_not_found_and_leaves_nothing(tmp_path):
    services, queue = _services(tmp_path)
    try:
        doc = services.ingest.submit(Upload(WS, b"first text", path="r.txt"))

        def delete_first(key: str) -> None:
            if key == original_key(WS, doc.id, 2):
                services.ingest.delete_document(WS, doc.id)

        ingest = IngestService(
            metadata=services.metadata,
            blobs=DeletingBlobs(services.blobs, delete_first),
            generations=shared_generation(services.index, None),
            queue=queue,
            defaults=services.ingest.defaults,
            policy=services.ingest.policy,
        )
        with pytest.raises(NotFoundError):
            ingest.submit(Upload(WS, b"second text", path=doc.path, replaces=doc.id))
        assert services.metadata.get_document(WS, doc.id) is None
        assert not services.blobs.exists(original_key(WS, doc.id, 2))
    finally:
        services.close()
