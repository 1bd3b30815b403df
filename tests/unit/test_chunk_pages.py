"""Library.chunk_page, on small fakes of its ports: pages in reading order, the page
holding a chunk (also once chunks before it were deleted), bad paging refused, and page sizes
that keep a response under Lambda's 6 MB with the largest chunks there can be. Over HTTP:
tests/e2e/test_rest_file_chunks.py."""

from __future__ import annotations

import pytest

from bunko.domain import Chunk, Document
from bunko.domain.ingest_options import MAX_CHUNK_SIZE
from bunko.errors import NotFoundError, ValidationError
from bunko.services.ingest import MAX_ITEM_CHARS
from bunko.services.library import (
    CHUNK_PAGE_SIZE,
    MAX_CHUNK_PAGE_SIZE,
    MAX_CHUNK_POSITION,
    Library,
)
from tests.fakes import FakeBlobStore, FakeMetadataStore

WS = "ws-1"
DOC = "doc-1"
LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024
BYTES_PER_CHAR = 4  # UTF-8 (up to 4 bytes) with JSON's escapes, for a rough upper bound


def service_with(chunk_count: int) -> tuple[Library, FakeMetadataStore]:
    metadata = FakeMetadataStore()
    metadata.add_document(Document(id=DOC, workspace_id=WS, path="a.txt", name="a.txt", mime=""))
    chunks = [
        Chunk(id=f"c{i}", document_id=DOC, workspace_id=WS, revision=1, index=i, content=f"#{i}")
        for i in range(chunk_count)
    ]
    metadata.replace_chunks(WS, DOC, chunks)
    service = Library(metadata=metadata, blobs=FakeBlobStore())
    return service, metadata


def indexes(page) -> list[int]:
    return [c.index for c in page.chunks]


def test_a_page_of_the_largest_chunks_stays_under_the_lambda_response_limit():
    largest = max(MAX_ITEM_CHARS, MAX_CHUNK_SIZE) * BYTES_PER_CHAR
    assert MAX_CHUNK_PAGE_SIZE * largest < LAMBDA_RESPONSE_BYTES
    assert CHUNK_PAGE_SIZE * largest <= LAMBDA_RESPONSE_BYTES / 3  # the default, far under


def test_pages_follow_each_other_in_reading_order():
    service, _ = service_with(23)
    first = service.chunk_page(WS, DOC)
    assert (first.total, first.offset, first.limit) == (23, 0, CHUNK_PAGE_SIZE)
    seen = indexes(first)
    offset = first.offset + first.limit
    while offset < first.total:
        page = service.chunk_page(WS, DOC, offset=offset)
        seen += indexes(page)
        offset += page.limit
    assert seen == list(range(23))
    past = service.chunk_page(WS, DOC, offset=100)
    assert past.chunks == [] and past.total == 23


@pytest.mark.parametrize(
    ("chunk", "limit", "offset"),
    [(0, 10, 0), (9, 10, 0), (10, 10, 10), (22, 10, 20), (22, 7, 21), (500, 10, 20)],
)
def test_the_page_holding_a_chunk_starts_at_a_multiple_of_limit(chunk, limit, offset):
    service, _ = service_with(23)
    page = service.chunk_page(WS, DOC, chunk=chunk, limit=limit)
    assert page.offset == offset
    assert min(chunk, 22) in indexes(page)  # past the end: the last page


def test_the_page_holding_a_chunk_counts_positions_once_chunks_are_gone():
    service, metadata = service_with(23)
    for i in range(5):  # items deleted: indexes 5… now sit at positions 0…
        metadata.delete_chunk(WS, f"c{i}")
    page = service.chunk_page(WS, DOC, chunk=15)
    assert page.offset == 10 and 15 in indexes(page)
    gone = service.chunk_page(WS, DOC, chunk=2)  # where it was: the first page
    assert gone.offset == 0 and indexes(gone)[0] == 5


def test_an_empty_document_has_one_empty_page():
    service, _ = service_with(0)
    for page in (service.chunk_page(WS, DOC), service.chunk_page(WS, DOC, chunk=3)):
        assert (page.chunks, page.total, page.offset) == ([], 0, 0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"limit": 0}, "limit must be between 1 and"),
        ({"limit": MAX_CHUNK_PAGE_SIZE + 1}, "limit must be between 1 and"),
        ({"offset": -1}, "offset must be between 0 and"),
        ({"chunk": -1}, "chunk must be between 0 and"),
        ({"offset": MAX_CHUNK_POSITION + 1}, "offset must be between 0 and"),
        ({"offset": 0, "chunk": 0}, "offset or chunk, not both"),
    ],
)
def test_bad_paging_is_refused(args, message):
    service, _ = service_with(3)
    with pytest.raises(ValidationError, match=message):
        service.chunk_page(WS, DOC, **args)


def test_another_workspaces_document_is_not_found():
    service, _ = service_with(3)
    with pytest.raises(NotFoundError):
        service.chunk_page("ws-2", DOC)
