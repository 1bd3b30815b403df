"""IngestService's own rules, on small fakes of its ports (tests/fakes.py): paths, limits,
idempotent re-delivery, revisions that keep the old original, what a delete removes. The
parse → chunk → embed → index pipeline runs for real in tests/integration/test_ingest_service.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from bunko.domain import DocumentStatus
from bunko.domain.ingest_options import IngestDefaults
from bunko.errors import NotFoundError, PayloadTooLargeError, ValidationError
from bunko.ports import IndexEntry, IngestJob
from bunko.services.embedding import shared_generation
from bunko.services.ingest import Upload
from bunko.services.ingest.ingest import IngestService
from bunko.services.ingest.upload_policy import UploadPolicy, normalise_path
from tests.fakes import FakeBlobStore, FakeMetadataStore, FakeQueue, FakeSearchIndex

WS = "ws-1"


@dataclass
class World:
    metadata: FakeMetadataStore = field(default_factory=FakeMetadataStore)
    blobs: FakeBlobStore = field(default_factory=FakeBlobStore)
    index: FakeSearchIndex = field(default_factory=FakeSearchIndex)
    queue: FakeQueue = field(default_factory=FakeQueue)

    def __post_init__(self) -> None:
        self.service = IngestService(
            metadata=self.metadata,
            blobs=self.blobs,
            generations=shared_generation(self.index, None),
            queue=self.queue,
            defaults=IngestDefaults(chunk_size=500, chunk_overlap=50),
            policy=UploadPolicy(max_file_bytes=100),
        )


@pytest.fixture
def ingest_world() -> World:
    return World()


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("a.txt", "a.txt"),
        ("/notes//b.md", "notes/b.md"),
        ("x\\y\\z.txt", "x/y/z.txt"),
        ("a/./b/../c.txt", "a/c.txt"),
    ],
)
def test_paths_are_normalised(raw, clean):
    assert normalise_path(raw) == clean


@pytest.mark.parametrize("bad", ["", "  ", "..", "../up.txt", "/", "a\x00b", "p" * 1025])
def test_bad_paths_are_refused(bad):
    with pytest.raises(ValidationError):
        normalise_path(bad)


def test_a_new_file_is_kept_recorded_and_queued(ingest_world):
    doc = ingest_world.service.submit(Upload(WS, b"hello", path="/notes/a.txt", category="notes"))
    assert (doc.path, doc.name, doc.revision, doc.status) == (
        "notes/a.txt",
        "a.txt",
        1,
        DocumentStatus.PENDING,
    )
    assert (doc.chunk_size, doc.chunk_overlap, doc.size) == (500, 50, 5)
    assert ingest_world.blobs.blobs == {f"originals/{WS}/{doc.id}/1": b"hello"}
    stored = ingest_world.metadata.get_document(WS, doc.id)
    assert (stored.id, stored.path, stored.status, stored.content_hash) == (
        doc.id,
        doc.path,
        doc.status,
        doc.content_hash,
    )
    (revision,) = ingest_world.metadata.list_revisions(WS, doc.id)
    assert revision.text_key == f"texts/{WS}/{doc.id}/1.txt"
    assert ingest_world.queue.jobs == [IngestJob(WS, doc.id, 1)]


def test_limits_and_chunk_settings_are_checked_before_anything_is_stored(ingest_world):
    with pytest.raises(PayloadTooLargeError):
        ingest_world.service.submit(Upload(WS, b"x" * 101, path="big.bin"))
    for size, overlap in [(-5, 0), (100, 100), (100, -1)]:  # (a size of 0 means the default)
        with pytest.raises(ValidationError):
            ingest_world.service.submit(
                Upload(WS, b"x", path="a.txt", chunk_size=size, chunk_overlap=overlap)
            )
    assert (
        ingest_world.blobs.blobs == {}
        and ingest_world.queue.jobs == []
        and ingest_world.metadata.documents == {}
    )


def test_identical_redelivery_changes_nothing(ingest_world):
    first = ingest_world.service.submit(Upload(WS, b"same", path="a.txt"))
    first.status = DocumentStatus.COMPLETED
    ingest_world.metadata.save_document(first)
    again = ingest_world.service.submit(Upload(WS, b"same", path="a.txt"))
    assert again.status is DocumentStatus.COMPLETED and again.revision == 1
    assert len(ingest_world.queue.jobs) == 1 and len(ingest_world.metadata.revisions) == 1


def test_same_bytes_with_new_settings_or_after_a_failure_reindex_the_same_revision(ingest_world):
    doc = ingest_world.service.submit(Upload(WS, b"same", path="a.txt"))
    ingest_world.service.submit(Upload(WS, b"same", path="a.txt", chunk_size=200))
    failed = ingest_world.metadata.get_document(WS, doc.id)
    failed.status, failed.error = DocumentStatus.FAILED, "boom"
    ingest_world.metadata.save_document(failed)
    retried = ingest_world.service.submit(Upload(WS, b"same", path="a.txt", chunk_size=200))
    assert (retried.status, retried.error, retried.chunk_size) == (
        DocumentStatus.PENDING,
        None,
        200,
    )
    assert ingest_world.queue.jobs == [IngestJob(WS, doc.id, 1)] * 3
    assert len(ingest_world.metadata.revisions) == 1 and len(ingest_world.blobs.blobs) == 1


def test_changed_bytes_add_a_revision_and_keep_the_old_original(ingest_world):
    doc = ingest_world.service.submit(Upload(WS, b"one", path="a.txt"))
    newer = ingest_world.service.submit(Upload(WS, b"two", path="a.txt"))
    assert (newer.id, newer.revision) == (doc.id, 2)
    assert ingest_world.blobs.get(f"originals/{WS}/{doc.id}/1") == b"one"
    assert ingest_world.blobs.get(f"originals/{WS}/{doc.id}/2") == b"two"
    assert [r.revision for r in ingest_world.metadata.list_revisions(WS, doc.id)] == [1, 2]
    assert ingest_world.queue.jobs[-1] == IngestJob(WS, doc.id, 2)


def test_submit_text_needs_content_and_guesses_the_mime(ingest_world):
    with pytest.raises(ValidationError):
        ingest_world.service.submit_text(WS, path="a.md", content="  ")
    doc = ingest_world.service.submit_text(WS, path="notes/a.md", content="# 見出し")
    assert doc.mime == "text/markdown" and doc.source == "agent"
    assert ingest_world.blobs.get(doc.blob_key) == "# 見出し".encode()


def test_delete_removes_index_entries_metadata_and_every_blob(ingest_world):
    doc = ingest_world.service.submit(Upload(WS, b"one", path="a.txt"))
    ingest_world.service.submit(Upload(WS, b"two", path="a.txt"))
    ingest_world.blobs.put(f"texts/{WS}/{doc.id}/2.txt", b"two")
    ingest_world.index.index([IndexEntry("c1", doc.id, WS, 2, "two")])
    kept = ingest_world.service.submit(Upload(WS, b"other", path="b.txt"))
    ingest_world.index.index([IndexEntry("c2", kept.id, WS, 1, "other")])
    assert ingest_world.service.delete_document(WS, doc.id).id == doc.id
    assert ingest_world.metadata.get_document(WS, doc.id) is None
    assert list(ingest_world.index.entries) == ["c2"]
    assert list(ingest_world.blobs.blobs) == [f"originals/{WS}/{kept.id}/1"]
    with pytest.raises(NotFoundError):
        ingest_world.service.delete_document(WS, doc.id)
    # A mirror scoped to one path deletes by the path as written (normalised), nothing else.
    assert ingest_world.service.mirror(WS, "api", [], within=["missing.txt"]).deleted == []
    gone = ingest_world.service.mirror(WS, "api", [], within=["/b.txt"]).deleted
    assert [d.id for d in gone] == [kept.id]
