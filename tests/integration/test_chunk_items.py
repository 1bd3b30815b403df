"""ChunkItemsService: TelosDB's chunk-level reads and edits, through real embedded adapters."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bunko.domain import DEFAULT_WORKSPACE_ID as WS
from bunko.domain import DocumentStatus
from bunko.errors import NotFoundError, PayloadTooLargeError, ValidationError
from bunko.ports import SearchFilter
from bunko.services.embedding import shared_generation
from bunko.services.ingest import Upload
from bunko.services.ingest.chunk_items import MAX_ITEM_CHARS, ChunkItemsService
from bunko.services.library import stored_text, text_key
from tests.conftest import make_services

OTHER_WS = "22222222-2222-4222-8222-222222222222"
LONG_TEXT = " ".join(f"Sentence {i} is about lighthouses and harbours." for i in range(120))


def add(services, path, text, category=None, workspace=WS):
    doc = services.ingest.submit_text(workspace, path=path, content=text, category=category)
    assert services.queue.join(timeout=120)
    return services.metadata.get_document(workspace, doc.id)


def keyword_ids(services, query, workspace=WS):
    return {h.chunk_id for h in services.index.keyword_search(query, SearchFilter(workspace), 50)}


@pytest.fixture
def doc(services):
    return add(services, "notes/harbour.md", LONG_TEXT, category="notes")


def test_get_item_returns_the_chunk_and_its_document(services, doc):
    chunk = services.metadata.get_chunks(WS, doc.id)[1]
    view = services.items.get_item(WS, chunk.id)
    assert view.chunk == chunk
    assert (view.document.id, view.document.path, view.document.category) == (
        doc.id, "notes/harbour.md", "notes",
    )  # fmt: skip


def test_unknown_and_foreign_ids_are_not_found_alike(services, doc):
    chunk = services.metadata.get_chunks(WS, doc.id)[0]
    for workspace, item_id in ((WS, "00000000-0000-4000-8000-00000000abcd"), (OTHER_WS, chunk.id)):
        with pytest.raises(NotFoundError, match="not found"):
            services.items.get_item(workspace, item_id)
    with pytest.raises(NotFoundError):
        services.library.read(OTHER_WS, doc.id)


def test_update_item_keeps_the_id_and_reindexes_the_text(services, doc):
    chunk = services.metadata.get_chunks(WS, doc.id)[0]
    assert chunk.id in keyword_ids(services, "lighthouses")
    view = services.items.update_item(WS, chunk.id, "Zeppelins moor at the airfield.")
    assert view.chunk.id == chunk.id
    assert services.metadata.get_chunk(WS, chunk.id).content == "Zeppelins moor at the airfield."
    assert chunk.id in keyword_ids(services, "zeppelins")
    assert chunk.id not in keyword_ids(services, "lighthouses")
    # The revision's extracted text is immutable (sealed corpora read it).
    assert services.library.read(WS, doc.id).text == LONG_TEXT


@pytest.mark.parametrize(
    ("content", "error"),
    [("   ", ValidationError), ("x" * (MAX_ITEM_CHARS + 1), PayloadTooLargeError)],
)
def test_a_refused_update_changes_nothing(services, doc, content, error):
    chunk = services.metadata.get_chunks(WS, doc.id)[0]
    with pytest.raises(error):
        services.items.update_item(WS, chunk.id, content)
    assert services.metadata.get_chunk(WS, chunk.id) == chunk


def test_an_index_failure_rolls_the_metadata_back(services, doc):
    class BrokenIndex:
        def __init__(self, inner):
            self.inner = inner

        def index(self, entries):
            raise RuntimeError("index is down")

    items = ChunkItemsService(
        metadata=services.metadata, blobs=services.blobs, generations=shared_generation(BrokenIndex(services.index), None),
    )  # fmt: skip
    chunk = services.metadata.get_chunks(WS, doc.id)[0]
    with pytest.raises(RuntimeError):
        items.update_item(WS, chunk.id, "new text")
    assert services.metadata.get_chunk(WS, chunk.id) == chunk


@pytest.mark.slow  # loads the USE model
def test_update_item_re_embeds_with_the_model(tmp_path):
    services = make_services(tmp_path / "data", embedder="lsa")
    try:
        corpus = {
            "a.txt": "Cats purr and chase mice around the barn.",
            "b.txt": "Ships sail across the ocean to distant harbours.",
            "c.txt": "Bread rises in a warm oven before baking.",
        }
        docs = [add(services, path, text) for path, text in corpus.items()]
        services.pipeline.reindex(retrain=True)
        chunk = services.metadata.get_chunks(WS, docs[0].id)[0]
        new_text = "Ships and harbours: the ocean crossing of the bread barn."
        services.items.update_item(WS, chunk.id, new_text)
        vector = np.asarray(services.embedder.embed_documents([new_text]))[0]
        hits = services.index.vector_search(vector, SearchFilter(WS), 3)
        assert hits[0].chunk_id == chunk.id
        assert hits[0].score == pytest.approx(1.0, abs=1e-3)
    finally:
        services.close()


def test_delete_item_removes_it_everywhere_but_keeps_the_document(services, doc):
    chunks = services.metadata.get_chunks(WS, doc.id)
    assert len(chunks) > 1
    victim = chunks[0]
    services.items.delete_item(WS, victim.id)
    assert services.metadata.get_chunk(WS, victim.id) is None
    assert victim.id not in keyword_ids(services, "lighthouses")
    after = services.metadata.get_document(WS, doc.id)
    assert after is not None and after.chunk_count == len(chunks) - 1
    with pytest.raises(NotFoundError):
        services.items.delete_item(WS, victim.id)


def test_get_document_has_the_full_text_and_chunks_in_order(services, doc):
    view = services.library.read(WS, doc.id)
    assert view.text == LONG_TEXT
    assert [c.index for c in view.chunks] == list(range(doc.chunk_count))


def text_blobs(services, doc) -> list[str]:
    """The extracted-text blobs of the document's revisions so far."""
    keys = [text_key(WS, doc.id, revision) for revision in range(1, doc.revision + 1)]
    return [key for key in keys if services.blobs.exists(key)]


def test_a_utf8_text_file_is_its_own_text_and_is_not_stored_twice(services, doc):
    assert text_blobs(services, doc) == []
    assert services.blobs.get(doc.blob_key) == LONG_TEXT.encode()
    assert services.library.read(WS, doc.id).text == LONG_TEXT


@pytest.mark.parametrize(
    ("path", "data", "text"),
    [
        ("crlf.txt", b"Harbour lights.\r\nLighthouse keepers.\r\n", "Lighthouse keepers."),
        (
            "latin1.txt",
            "Caf\u00e9 by the harbour, na\u00efve lighthouses.".encode("latin-1"),
            "Caf\u00e9",
        ),
        (
            "page.html",
            b"<html><body><h1>Harbour</h1><p>Lighthouse keepers.</p></body></html>",
            "Harbour",
        ),
    ],
)
def test_a_file_whose_text_differs_from_its_bytes_keeps_its_text(services, path, data, text):
    submitted = services.ingest.submit(Upload(WS, data, path=path))
    assert services.queue.join(timeout=120)
    doc = services.metadata.get_document(WS, submitted.id)
    assert text_blobs(services, doc) == [f"texts/{WS}/{doc.id}/1.txt"]
    view = services.library.read(WS, doc.id)
    assert text in view.text and view.text.encode() != data
    assert view.text == services.blobs.get(text_blobs(services, doc)[0]).decode()


def test_a_revision_has_no_text_until_it_is_indexed(services, doc):
    # Only a completed revision without a text blob is its own text; before that it has none
    # (get_document then joins whatever chunks the document has).
    for status in (DocumentStatus.PENDING, DocumentStatus.INDEXING, DocumentStatus.FAILED):
        assert stored_text(replace(doc, status=status), services.blobs) is None
    assert stored_text(doc, services.blobs) == LONG_TEXT


def test_paging_matches_telosdb(services):
    empty = services.library.list_documents(WS, limit=20, page=1)
    assert (empty.items, empty.total_count, empty.total_pages, empty.page) == ([], 0, 0, 1)
    for i in range(5):
        add(services, f"docs/{i}.txt", f"document number {i}", category="even" if i % 2 else None)
    pages = [services.library.list_documents(WS, limit=2, page=p) for p in (1, 2, 3, 4)]
    assert [len(p.items) for p in pages] == [2, 2, 1, 0]
    assert {(p.total_count, p.total_pages) for p in pages} == {(5, 3)}
    assert len({d.id for p in pages for d in p.items}) == 5
    only_even = services.library.list_documents(WS, limit=20, page=1, category="even")
    assert only_even.total_count == 2
    assert services.library.list_categories(WS) == ["even"]
    assert services.library.count_documents(WS) == 5
    assert services.library.count_documents(OTHER_WS) == 0


@pytest.mark.parametrize(("limit", "page"), [(0, 1), (101, 1), (20, 0)])
def test_paging_bounds(services, limit, page):
    with pytest.raises(ValidationError):
        services.library.list_documents(WS, limit=limit, page=page)


def test_wait_until_indexed_returns_the_finished_document(services):
    submitted = services.ingest.submit_text(WS, path="w.txt", content="wait for me")
    done = services.library.wait_until_indexed(WS, submitted.id, timeout=60)
    assert done.status == "completed" and done.chunk_count == 1
