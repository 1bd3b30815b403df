"""Every MetadataStore behaves alike: the SQLite one here, DynamoDB under moto later."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bunko.domain import Chunk, Document, DocumentStatus, Revision, Workspace, new_id, utcnow
from bunko.domain.document_query import DocumentQuery
from bunko.errors import ConflictError, NotFoundError, StaleError
from bunko.ports import DocumentWrite
from bunko.services.ingest.document_writes import write_documents
from tests.contract.documents import OTHER_WS, WS, make_doc


def make_chunks(doc: Document, n: int, revision: int = 1) -> list[Chunk]:
    return [
        Chunk(
            id=new_id(),
            document_id=doc.id,
            workspace_id=doc.workspace_id,
            revision=revision,
            index=i,
            content=f"chunk {i} 日本語",
            start=i * 10,
            end=i * 10 + 9,
            page=i + 1,
            # every other chunk runs onto the next two pages: where they begin is kept
            page_breaks=((i * 10 + 4, i + 2), (i * 10 + 7, i + 3)) if i % 2 else (),
        )
        for i in range(n)
    ]


def test_workspace_ensure_is_idempotent(metadata_store):
    ws = metadata_store.ensure_workspace(Workspace(id=WS, name="team"))
    again = metadata_store.ensure_workspace(Workspace(id=WS, name="renamed"))
    assert ws.id == again.id == WS
    assert again.name == "team"
    assert metadata_store.get_workspace(OTHER_WS) is None


def test_document_roundtrip_keeps_every_field(metadata_store):
    doc = make_doc(
        category="manuals",
        size=123,
        content_hash="abc",
        chunk_size=500,
        chunk_overlap=50,
        source="drop",
        blob_key="originals/x",
        mode="precise",
        embedding_model_id="config-1",
    )
    metadata_store.add_document(doc)
    got = metadata_store.get_document(WS, doc.id)
    assert got == doc
    assert metadata_store.get_document_by_path(WS, doc.path) == doc


def test_upload_options_default_and_change_with_the_document(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    got = metadata_store.get_document(WS, doc.id)
    assert (got.mode, got.embedding_model_id) == ("fast", None)
    got.mode, got.embedding_model_id = "precise", "config-1"
    metadata_store.save_document(got, if_revision=1)
    assert metadata_store.get_document(WS, doc.id) == got
    got.mode, got.embedding_model_id = "fast", None  # a value taken away is gone
    metadata_store.save_document(got)
    (listed,) = metadata_store.find_documents(WS, DocumentQuery(), limit=10).documents
    (by_name,) = metadata_store.find_documents(WS, DocumentQuery(sort="name"), limit=10).documents
    assert listed == by_name == got
    assert metadata_store.get_documents_by_ids(WS, [doc.id]) == [got]
    assert list(metadata_store.iter_documents(WS)) == [got]


def test_path_is_unique_per_workspace(metadata_store):
    metadata_store.add_document(make_doc("same.txt"))
    with pytest.raises(ConflictError):
        metadata_store.add_document(make_doc("same.txt"))
    metadata_store.add_document(make_doc("same.txt", workspace_id=OTHER_WS))
    assert metadata_store.count_documents(WS) == 1
    assert metadata_store.count_documents(OTHER_WS) == 1


def test_save_document_updates_status_and_revision(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    doc.status = DocumentStatus.FAILED
    doc.error = "not a valid PDF"
    doc.revision = 2
    doc.updated_at = utcnow()
    metadata_store.save_document(doc)
    got = metadata_store.get_document(WS, doc.id)
    assert got.status is DocumentStatus.FAILED
    assert got.error == "not a valid PDF"
    assert got.revision == 2


def test_save_unknown_document_raises(metadata_store):
    with pytest.raises(NotFoundError):
        metadata_store.save_document(make_doc())
    with pytest.raises(NotFoundError):
        metadata_store.save_document(make_doc(), if_revision=1)


def test_a_conditional_save_lands_only_on_the_revision_it_read(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    newer = metadata_store.get_document(WS, doc.id)
    newer.revision = 2
    metadata_store.save_document(newer, if_revision=1)
    doc.status = DocumentStatus.COMPLETED  # a worker still holding revision 1
    with pytest.raises(StaleError):
        metadata_store.save_document(doc, if_revision=1)
    got = metadata_store.get_document(WS, doc.id)
    assert (got.revision, got.status) == (2, DocumentStatus.PENDING)


def test_other_workspace_cannot_read_or_delete(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    assert metadata_store.get_document(OTHER_WS, doc.id) is None
    assert metadata_store.get_document_by_path(OTHER_WS, doc.path) is None
    assert metadata_store.delete_document(OTHER_WS, doc.id) is False
    assert metadata_store.get_document(WS, doc.id) is not None


def test_documents_by_ids_come_in_the_order_asked_and_only_from_the_workspace(metadata_store):
    metadata_store.ensure_workspace(Workspace(id=WS, name="a"))
    metadata_store.ensure_workspace(Workspace(id=OTHER_WS, name="b"))
    docs = [make_doc(f"many/{n}.txt") for n in range(120)]  # past one batch of DynamoDB's
    for doc in docs:
        metadata_store.add_document(doc)
    theirs = make_doc("theirs.txt", workspace_id=OTHER_WS)
    metadata_store.add_document(theirs)
    asked = [d.id for d in reversed(docs)] + [docs[5].id, "no-such-id", theirs.id]
    found = metadata_store.get_documents_by_ids(WS, asked)
    assert [d.id for d in found] == [d.id for d in reversed(docs)]  # each once, in order
    assert found[-1] == metadata_store.get_document(WS, docs[0].id)  # every field
    assert metadata_store.get_documents_by_ids(WS, []) == []
    assert metadata_store.get_documents_by_ids(OTHER_WS, [docs[0].id]) == []


def test_list_documents_pages_newest_first(metadata_store):
    base = utcnow()
    docs = []
    for i in range(7):
        d = make_doc(f"d{i}.txt", category="even" if i % 2 == 0 else "odd")
        d.created_at = base + timedelta(seconds=i)
        metadata_store.add_document(d)
        docs.append(d)
    first = metadata_store.list_documents(WS, limit=3)
    assert [d.path for d in first] == ["d6.txt", "d5.txt", "d4.txt"]
    rest = metadata_store.list_documents(WS, limit=10, offset=3)
    assert [d.path for d in rest] == ["d3.txt", "d2.txt", "d1.txt", "d0.txt"]
    assert metadata_store.list_documents(WS, limit=5, offset=100) == []
    evens = metadata_store.list_documents(WS, limit=10, category="even")
    assert {d.path for d in evens} == {"d0.txt", "d2.txt", "d4.txt", "d6.txt"}
    assert metadata_store.count_documents(WS, category="odd") == 3
    assert metadata_store.list_categories(WS) == ["even", "odd"]
    assert metadata_store.list_categories(OTHER_WS) == []


def test_chunks_replace_get_and_lookup(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    chunks = make_chunks(doc, 3)
    metadata_store.replace_chunks(WS, doc.id, chunks)
    assert metadata_store.get_chunks(WS, doc.id) == chunks
    assert metadata_store.get_chunk(WS, chunks[1].id) == chunks[1]
    assert metadata_store.get_chunk(OTHER_WS, chunks[1].id) is None
    ids = [chunks[2].id, "missing", chunks[0].id]
    assert [c.id for c in metadata_store.get_chunks_by_ids(WS, ids)] == [
        chunks[2].id,
        chunks[0].id,
    ]
    assert metadata_store.get_chunks_by_ids(OTHER_WS, ids) == []
    assert metadata_store.count_chunks(WS) == 3


def test_replace_chunks_is_idempotent_and_replaces(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    chunks = make_chunks(doc, 4)
    metadata_store.replace_chunks(WS, doc.id, chunks)
    metadata_store.replace_chunks(WS, doc.id, chunks)
    assert metadata_store.count_chunks(WS) == 4
    newer = make_chunks(doc, 2, revision=2)
    metadata_store.replace_chunks(WS, doc.id, newer)
    assert metadata_store.get_chunks(WS, doc.id) == newer


def test_replace_chunks_of_unknown_document_raises(metadata_store):
    with pytest.raises(NotFoundError):
        metadata_store.replace_chunks(WS, new_id(), [])


def test_a_group_write_saves_each_document_and_replaces_its_chunks(metadata_store):
    # Through `write_documents`: the store's one transaction when it has one, else the same
    # results one document at a time.
    first, second, third = make_doc("1.txt"), make_doc("2.txt"), make_doc("3.txt")
    for doc in (first, second, third):
        metadata_store.add_document(doc)
    old = make_chunks(first, 3)
    metadata_store.replace_chunks(WS, first.id, old)
    kept, new = old[0], make_chunks(first, 2)[1]
    first.status, first.chunk_count = DocumentStatus.COMPLETED, 2
    second.status = DocumentStatus.INDEXING
    third.status = DocumentStatus.COMPLETED
    removed = write_documents(
        metadata_store,
        [DocumentWrite(first, [kept, new]), DocumentWrite(second), DocumentWrite(third, [])],
    )
    assert [sorted(r) for r in removed] == [sorted(c.id for c in old[1:]), [], []]
    assert metadata_store.get_document(WS, first.id) == first
    assert metadata_store.get_chunks(WS, first.id) == [kept, new]
    assert metadata_store.get_document(WS, second.id).status is DocumentStatus.INDEXING
    assert metadata_store.get_document(WS, third.id).status is DocumentStatus.COMPLETED
    assert metadata_store.count_chunks(WS) == 2


def test_a_group_write_leaves_a_deleted_or_newer_document_alone(metadata_store):
    gone, newer, fine = make_doc("gone.txt"), make_doc("newer.txt"), make_doc("fine.txt")
    for doc in (gone, newer, fine):
        metadata_store.add_document(doc)
    metadata_store.delete_document(WS, gone.id)
    moved_on = metadata_store.get_document(WS, newer.id)
    moved_on.revision = 2
    metadata_store.save_document(moved_on, if_revision=1)
    for doc in (gone, newer, fine):
        doc.status = DocumentStatus.COMPLETED
    removed = write_documents(
        metadata_store,
        [DocumentWrite(d, make_chunks(d, 2)) for d in (gone, newer, fine)],
    )
    assert removed == [None, None, []]
    assert metadata_store.get_document(WS, gone.id) is None
    got = metadata_store.get_document(WS, newer.id)
    assert (got.revision, got.status) == (2, DocumentStatus.PENDING)
    assert metadata_store.get_chunks(WS, newer.id) == []
    assert metadata_store.get_document(WS, fine.id).status is DocumentStatus.COMPLETED
    assert metadata_store.count_chunks(WS) == 2


def test_save_and_delete_chunk(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    chunks = make_chunks(doc, 2)
    metadata_store.replace_chunks(WS, doc.id, chunks)
    chunks[0].content = "updated text"
    chunks[0].page_breaks = ((3, 2),)
    metadata_store.save_chunk(chunks[0])
    assert metadata_store.get_chunk(WS, chunks[0].id) == chunks[0]
    assert metadata_store.delete_chunk(OTHER_WS, chunks[1].id) is False
    assert metadata_store.delete_chunk(WS, chunks[1].id) is True
    assert metadata_store.delete_chunk(WS, chunks[1].id) is False
    assert metadata_store.get_chunks(WS, doc.id) == [chunks[0]]


def test_large_chunk_text_roundtrips(metadata_store):
    # Larger than a DynamoDB item (400 KB): adapters must spill it, not truncate it.
    doc = make_doc()
    metadata_store.add_document(doc)
    big = Chunk(
        id=new_id(),
        document_id=doc.id,
        workspace_id=WS,
        revision=1,
        index=0,
        content="語" * 200_000,
    )
    metadata_store.replace_chunks(WS, doc.id, [big])
    assert metadata_store.get_chunk(WS, big.id).content == big.content


def test_delete_document_removes_chunks_and_revisions(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    metadata_store.replace_chunks(WS, doc.id, make_chunks(doc, 3))
    metadata_store.add_revision(
        Revision(
            document_id=doc.id,
            workspace_id=WS,
            revision=1,
            content_hash="h1",
            blob_key="k1",
            text_key="t1",
        )
    )
    assert metadata_store.delete_document(WS, doc.id) is True
    assert metadata_store.get_document(WS, doc.id) is None
    assert metadata_store.get_chunks(WS, doc.id) == []
    assert metadata_store.list_revisions(WS, doc.id) == []
    assert metadata_store.count_chunks(WS) == 0
    assert metadata_store.delete_document(WS, doc.id) is False


def test_revisions_are_kept_per_number(metadata_store):
    doc = make_doc()
    metadata_store.add_document(doc)
    for n in (1, 2):
        metadata_store.add_revision(
            Revision(
                document_id=doc.id,
                workspace_id=WS,
                revision=n,
                content_hash=f"h{n}",
                blob_key=f"k{n}",
                size=n,
            )
        )
    assert [r.revision for r in metadata_store.list_revisions(WS, doc.id)] == [1, 2]
    assert metadata_store.get_revision(WS, doc.id, 1).content_hash == "h1"
    assert metadata_store.get_revision(OTHER_WS, doc.id, 1) is None
    assert metadata_store.get_revision(WS, doc.id, 3) is None


def test_iter_chunks_and_documents_cover_everything(metadata_store):
    total = 0
    for i in range(3):
        doc = make_doc(f"d{i}.txt")
        metadata_store.add_document(doc)
        metadata_store.replace_chunks(WS, doc.id, make_chunks(doc, 5))
        total += 5
    other = make_doc("o.txt", workspace_id=OTHER_WS)
    metadata_store.add_document(other)
    metadata_store.replace_chunks(OTHER_WS, other.id, make_chunks(other, 2))
    assert len(list(metadata_store.iter_chunks(WS))) == total
    assert len(list(metadata_store.iter_chunks())) == total + 2
    assert len(list(metadata_store.iter_documents(WS))) == 3
    assert len(list(metadata_store.iter_documents())) == 4
