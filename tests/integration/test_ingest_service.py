"""The ingest rules, through real embedded adapters: idempotency, revisions, failures, deletes."""

from __future__ import annotations

import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.errors import NotFoundError, PayloadTooLargeError, ValidationError
from bunko.services.ingest import Upload
from bunko.services.ingest.upload_policy import UploadPolicy
from bunko.services.search.search import SearchOptions
from tests.fixtures_files import SAMPLE_KINDS, make_file

OTHER_WS = "22222222-2222-4222-8222-222222222222"


def ingest(services, path, data, **kw):
    doc = services.ingest.submit(Upload(WS, data, path=path, **kw))
    assert services.queue.join(timeout=120)
    return services.metadata.get_document(WS, doc.id)


def test_unknown_extension_with_text_inside_is_read_as_text(services):
    doc = ingest(services, "build.log", b"step 3 finished without errors")
    assert doc.status is DocumentStatus.COMPLETED
    assert doc.mime.startswith("text/")


def test_each_supported_type_reaches_completed(services):
    for kind in SAMPLE_KINDS:
        doc = ingest(
            services, f"samples/sample.{kind}", make_file(kind, f"Bunko reads {kind} files well.")
        )
        assert doc.status is DocumentStatus.COMPLETED, (kind, doc.error)
        assert doc.chunk_count >= 1
        chunks = services.metadata.get_chunks(WS, doc.id)
        assert any(kind in c.content for c in chunks), kind


def test_identical_reingest_adds_no_revision_and_no_chunks(services):
    first = ingest(services, "a.txt", b"The same content twice.")
    chunks_before = services.metadata.get_chunks(WS, first.id)
    again = ingest(services, "a.txt", b"The same content twice.")
    assert again.id == first.id and again.revision == 1
    assert services.metadata.get_chunks(WS, first.id) == chunks_before
    assert services.index.count(WS) == len(chunks_before)
    assert len(services.metadata.list_revisions(WS, first.id)) == 1


def test_changed_content_creates_next_revision_and_keeps_the_old_text(services):
    first = ingest(services, "a.txt", b"Version one talks about apples.")
    second = ingest(services, "a.txt", b"Version two talks about pears.")
    assert second.id == first.id and second.revision == 2
    revisions = services.metadata.list_revisions(WS, first.id)
    assert [r.revision for r in revisions] == [1, 2]
    # A text file is its own extracted text: the old revision's original keeps it.
    assert services.blobs.get(revisions[0].blob_key) == b"Version one talks about apples."
    hits = services.search.search(WS, "apples", SearchOptions(min_score=0))
    assert hits.items == []  # the old revision is no longer searchable
    assert (
        services.search.search(WS, "pears", SearchOptions(min_score=0)).items[0].document_id
        == first.id
    )
    assert services.index.count(WS) == services.metadata.count_chunks(WS)


def test_redelivered_job_does_not_duplicate(services):
    doc = ingest(services, "a.txt", b"Deliver me twice.")
    from bunko.ports import IngestJob

    services.pipeline.process([IngestJob(WS, doc.id, doc.revision)] * 2)
    assert services.metadata.count_chunks(WS) == doc.chunk_count
    assert services.index.count(WS) == doc.chunk_count


def _claim_without_bytes(services, path, data):
    """The state a process leaves when it dies (or the disk fills) after claiming a path and
    before writing the file's bytes: a pending document with no original. The disk refuses
    the original for real: a file stands where the library's originals folder goes."""
    folder = services.blobs.root / "originals" / WS
    aside = folder.with_name(f"{WS}.aside")
    if folder.exists():
        folder.rename(aside)
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_bytes(b"")
    try:
        with pytest.raises(OSError):
            services.ingest.submit(Upload(WS, data, path=path, source="drop"))
    finally:
        folder.unlink()
        if aside.exists():
            aside.rename(folder)
    doc = services.metadata.get_document_by_path(WS, path)
    assert doc.status is DocumentStatus.PENDING and not services.blobs.exists(doc.blob_key)
    return doc


def test_a_job_for_bytes_never_stored_fails_and_sending_the_file_again_completes_it(services):
    data = b"A drop the last process claimed but never stored."
    doc = _claim_without_bytes(services, "drop/late.txt", data)
    from bunko.ports import IngestJob

    [failed] = services.pipeline.process([IngestJob(WS, doc.id, doc.revision)])
    assert failed.status is DocumentStatus.FAILED
    assert "never fully received; send it again" in failed.error
    again = ingest(services, "drop/late.txt", data, source="drop")  # the watcher's rescan
    assert (again.id, again.revision, again.status) == (doc.id, 1, DocumentStatus.COMPLETED)
    assert services.blobs.get(again.blob_key) == data
    assert [r.revision for r in services.metadata.list_revisions(WS, doc.id)] == [1]


def test_bytes_never_stored_are_written_when_the_same_file_arrives_before_the_job(services):
    data = b"The rescan comes first this time."
    doc = _claim_without_bytes(services, "drop/first.txt", data)
    again = ingest(services, "drop/first.txt", data, source="drop")
    assert (again.id, again.revision, again.status) == (doc.id, 1, DocumentStatus.COMPLETED)
    assert services.index.count(WS) == again.chunk_count


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("broken.pdf", b"%PDF-1.7 this is not really a pdf", "pdf"),
        ("broken.docx", b"PK\x03\x04 not a zip at all", "docx"),
        ("mystery.xyz", b"\x89PNG\r\n\x1a\n" + bytes(64), "unsupported file type"),
        ("binary.txt", bytes(range(256)) * 20, "binary data"),
    ],
)
def test_unreadable_files_fail_with_a_readable_error(services, name, data, reason):
    good = ingest(services, "good.txt", b"Nothing is lost when another file fails.")
    doc = ingest(services, name, data)
    assert doc.status is DocumentStatus.FAILED
    assert doc.error and reason in doc.error.lower()
    assert "Traceback" not in doc.error
    assert services.metadata.get_document(WS, good.id).status is DocumentStatus.COMPLETED
    assert services.search.search(WS, "lost", SearchOptions(min_score=0)).items


def test_an_empty_file_is_refused_before_anything_is_stored(services):
    with pytest.raises(ValidationError, match="empty"):
        services.ingest.submit(Upload(WS, b"", path="empty.txt"))
    assert services.metadata.count_documents(WS) == 0


def test_failed_new_revision_keeps_the_previous_chunks_searchable(services):
    doc = ingest(services, "report.pdf", make_file("pdf", "Quarterly revenue grew strongly."))
    assert doc.status is DocumentStatus.COMPLETED
    broken = ingest(services, "report.pdf", b"%PDF-1.4 garbage")
    assert broken.status is DocumentStatus.FAILED and broken.revision == 2
    assert services.search.search(WS, "revenue", SearchOptions(min_score=0)).items


def test_too_large_and_bad_paths_are_refused_before_storing(services):
    services.ingest.policy = UploadPolicy(max_file_bytes=10)
    with pytest.raises(PayloadTooLargeError):
        services.ingest.submit(Upload(WS, b"x" * 11, path="big.txt"))
    for bad in ["", "   ", "../../etc/passwd", "a\x00b", "x" * 2000]:
        with pytest.raises(ValidationError):
            services.ingest.submit(Upload(WS, b"hello", path=bad))
    assert services.metadata.count_documents(WS) == 0


def test_traversal_paths_are_refused_and_dot_segments_folded(services):
    with pytest.raises(ValidationError):
        services.ingest.submit(Upload(WS, b"traversal", path="notes/../../secret.txt"))
    doc = ingest(services, "/notes/./a/../b.txt", b"folded")
    assert doc.path == "notes/b.txt"


def test_delete_removes_document_chunks_index_entries_and_blobs(services):
    doc = ingest(services, "gone.txt", b"Delete me entirely.")
    services.ingest.delete_document(WS, doc.id)
    assert services.metadata.get_document(WS, doc.id) is None
    assert services.metadata.count_chunks(WS) == 0
    assert services.index.count(WS) == 0
    assert not services.blobs.exists(doc.blob_key)
    with pytest.raises(NotFoundError):
        services.ingest.delete_document(WS, doc.id)


def test_other_workspace_cannot_delete(services):
    doc = ingest(services, "mine.txt", b"Mine.")
    with pytest.raises(NotFoundError):
        services.ingest.delete_document(OTHER_WS, doc.id)
    assert services.metadata.get_document(WS, doc.id) is not None


def test_reindex_rebuilds_from_metadata(services):
    ingest(services, "a.txt", b"Alpha bravo charlie.")
    ingest(services, "b.txt", b"Delta echo foxtrot.")
    services.index.clear()
    assert services.search.search(WS, "echo", SearchOptions(min_score=0)).items == []
    assert services.pipeline.reindex() == services.metadata.count_chunks()
    assert services.search.search(WS, "echo", SearchOptions(min_score=0)).items[0].path == "b.txt"


def test_a_batch_reads_each_workspaces_model_choice_once_not_once_a_document():
    # The model a workspace is on is a settings read (SQLite here, DynamoDB on AWS): three
    # a document made ~a quarter of the pipeline's own CPU for small files. Now one a
    # workspace per batch of jobs, and two a workspace per write of documents together.
    from bunko.bootstrap.scratch import scratch_services

    with scratch_services(embedder="none") as (services, queue):
        store, index = services.pipeline.generations.store, services.index
        reads, writes = [], []
        get_settings, write = store.get_settings, index.index
        store.get_settings = lambda *a, **kw: reads.append(a[1]) or get_settings(*a, **kw)
        index.index = lambda entries: (
            writes.append({e.workspace_id for e in entries}) or write(entries)
        )
        for n in range(30):
            services.ingest.submit_text(WS, path=f"n{n}.txt", content=f"Note {n} on harbours.")
        for other in ("w1", "w2"):
            services.ingest.submit_text(other, path="x.txt", content="A note elsewhere.")
        done = services.pipeline.process(queue.take())
        assert len(done) == 32 and all(d.status is DocumentStatus.COMPLETED for d in done)
        assert sorted(set(reads)) == sorted({WS, "w1", "w2"})
        assert len(reads) == 3 + 2 * sum(len(workspaces) for workspaces in writes)
