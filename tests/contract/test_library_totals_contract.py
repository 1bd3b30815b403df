"""Every MetadataStore keeps a library's totals (documents, bytes at their current revision's
size) in step with its documents through adds, new revisions, category moves, the
pipeline's group write and deletes (issue 47, point 7): on SQLite they are counted, on
DynamoDB they are a counter item written in the documents' own transactions."""

from __future__ import annotations

import dataclasses

import pytest

from bunko.domain import Chunk
from bunko.errors import ConflictError
from bunko.ports import DocumentWrite, DocumentWrites, LibraryTotals
from tests.contract.documents import OTHER_WS, WS, make_doc


def truth(store, workspace_id: str) -> LibraryTotals:
    docs = list(store.iter_documents(workspace_id))
    return LibraryTotals(documents=len(docs), bytes=sum(d.size for d in docs))


def check(store) -> None:
    for ws in (WS, OTHER_WS):
        assert store.library_totals(ws) == truth(store, ws)
        assert store.count_documents(ws) == truth(store, ws).documents
        for category in ("manuals", "notes"):
            expected = sum(1 for d in store.iter_documents(ws) if d.category == category)
            assert store.count_documents(ws, category=category) == expected


def test_totals_follow_adds_revisions_moves_and_deletes(metadata_store):
    store = metadata_store
    assert store.library_totals(WS) == LibraryTotals(documents=0, bytes=0)
    a = make_doc("manuals/a.pdf", size=1000, category="manuals")
    b = make_doc("notes/b.md", size=20, category="notes")
    c = make_doc("c.txt", size=7)
    for doc in (a, b, c):
        store.add_document(doc)
    store.add_document(make_doc("elsewhere.txt", workspace_id=OTHER_WS, size=5))
    assert store.library_totals(WS) == LibraryTotals(documents=3, bytes=1027)
    check(store)

    # a new revision of another size, a rename into another category
    store.save_document(dataclasses.replace(a, revision=2, size=400))
    store.save_document(dataclasses.replace(b, path="manuals/b.md", category="manuals"))
    assert store.library_totals(WS) == LibraryTotals(documents=3, bytes=427)
    check(store)

    # a refused add (the path is taken) changes nothing
    with pytest.raises(ConflictError):
        store.add_document(make_doc("c.txt", size=10**6))
    assert store.library_totals(WS) == LibraryTotals(documents=3, bytes=427)

    # the pipeline's group write (its document and chunks), when the store has one
    if isinstance(store, DocumentWrites):
        grown = dataclasses.replace(store.get_document(WS, c.id), size=70)
        chunk = Chunk(id="c-1", document_id=c.id, workspace_id=WS, revision=1, index=0,
                      content="seven")  # fmt: skip
        store.write_documents([DocumentWrite(document=grown, chunks=[chunk])])
        assert store.library_totals(WS) == LibraryTotals(documents=3, bytes=490)

    assert store.delete_document(WS, a.id)
    assert not store.delete_document(WS, a.id)  # a second delete counts nothing
    check(store)
    for doc in list(store.iter_documents(WS)):
        store.delete_document(WS, doc.id)
    assert store.library_totals(WS) == LibraryTotals(documents=0, bytes=0)
    assert store.library_totals(OTHER_WS) == LibraryTotals(documents=1, bytes=5)
    check(store)
