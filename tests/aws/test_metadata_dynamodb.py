"""Document metadata in DynamoDB (moto): it round-trips exactly (numbers, lists, unicode), an
item written before documents had metadata reads as {}, the ingest pipeline's save never
overwrites an edit made while the file was indexed, and the library listing and a search's
document resolution filter by it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
from bunko.domain import Chunk, Document, DocumentStatus, new_id
from bunko.domain.document_query import DocumentQuery
from bunko.domain.metadata import check_metadata, matches, parse_filter, terms_of
from bunko.ports import DocumentWrite, DocumentWrites
from bunko.services.ingest.document_writes import write_documents
from tests.aws.stand_ins import TABLE

WS, OTHER = "ws-1", "ws-2"


def doc(name: str, metadata: dict | None = None, *, ws: str = WS, **kw: Any) -> Document:
    return Document(
        id=f"doc-{name}", workspace_id=ws, path=f"{name}.txt", name=f"{name}.txt",
        mime="text/plain", metadata=check_metadata(metadata), **kw,
    )  # fmt: skip


def raw_item(store: DynamoDBMetadataStore, ws: str, document_id: str) -> dict:
    return store.table.client.get_item(
        TableName=TABLE, Key=items.serialize(items.doc_key(ws, document_id))
    )["Item"]


def forget_metadata(store: DynamoDBMetadataStore, ws: str, document_id: str) -> None:
    """The item as a Bunko before metadata wrote it: no such attribute."""
    store.table.client.update_item(
        TableName=TABLE, Key=items.serialize(items.doc_key(ws, document_id)),
        UpdateExpression="REMOVE #m", ExpressionAttributeNames={"#m": "metadata"},
    )  # fmt: skip


# round trip -------------------------------------------------------------------------------

EXACT = {
    "year": 2023, "fraction": 0.1, "negative": -3.5, "huge": 1e200, "tiny": 5e-324,
    "big_integer": 2**53 + 2, "tags": ["ja", "api", "日本語"], "日本語キー": "値 ✓",
    "published": "2024-06-01T09:30:00+09:00", "day": "2024-01-15",
}  # fmt: skip


def test_metadata_round_trips_exactly_through_every_read(store):
    written = doc("a", EXACT, category="manuals")
    store.add_document(written)
    stored = store.get_document(WS, "doc-a")
    assert stored == written
    assert stored.metadata["tiny"] == 5e-324 and stored.metadata["huge"] == 1e200
    assert isinstance(stored.metadata["year"], float)
    assert stored.metadata["published"] == "2024-06-01T00:30:00Z"  # canonical, kept as is
    assert store.get_document_by_path(WS, "a.txt") == written
    assert store.get_documents_by_ids(WS, ["doc-a"]) == [written]
    assert list(store.iter_documents(WS)) == [written]
    assert store.list_documents(WS, limit=5) == [written]
    assert store.find_documents(WS, DocumentQuery(), limit=5).documents == [written]
    assert store.find_documents(WS, DocumentQuery(sort="name"), limit=5).documents == [written]
    # One string attribute, JSON: DynamoDB numbers could not hold 1e200 or 5e-324.
    attribute = raw_item(store, WS, "doc-a")["metadata"]
    assert json.loads(attribute["S"]) == written.metadata


def test_an_edit_replaces_the_metadata_and_an_empty_one_leaves_no_attribute(store):
    store.add_document(doc("a", {"team": "x", "n": 1}))
    edited = store.get_document(WS, "doc-a")
    edited.metadata = check_metadata({"team": "y", "list": ["a"]})
    store.save_document(edited, if_revision=1)
    assert store.get_document(WS, "doc-a").metadata == {"team": "y", "list": ["a"]}
    edited.metadata = {}
    store.save_document(edited)
    assert store.get_document(WS, "doc-a").metadata == {}
    assert "metadata" not in raw_item(store, WS, "doc-a")
    store.add_document(doc("b"))
    assert "metadata" not in raw_item(store, WS, "doc-b")


def test_an_item_written_before_metadata_reads_as_empty(store):
    store.add_document(doc("old", {"team": "x"}, category="notes"))
    forget_metadata(store, WS, "doc-old")
    old = store.get_document(WS, "doc-old")
    assert old.metadata == {}
    store.add_document(doc("new", {"team": "x"}))
    flt = parse_filter({"exists": {"key": "team"}})
    assert store.documents_matching(WS, flt) == {"doc-new"}
    category = parse_filter({"equals": {"key": "category", "value": "notes"}})
    assert store.documents_matching(WS, category) == {"doc-old"}  # its category still counts
    page = store.find_documents(WS, DocumentQuery(filter=flt), limit=10)
    assert [d.id for d in page.documents] == ["doc-new"] and page.total == 1
    old.metadata = check_metadata({"team": "x"})  # its next edit writes the attribute
    store.save_document(old)
    assert store.documents_matching(WS, flt) == {"doc-new", "doc-old"}


# the pipeline's save ----------------------------------------------------------------------


def chunks_of(document: Document, n: int) -> list[Chunk]:
    return [
        Chunk(id=new_id(), document_id=document.id, workspace_id=document.workspace_id,
              revision=document.revision, index=i, content=f"chunk {i}")
        for i in range(n)
    ]  # fmt: skip


def test_the_pipeline_save_does_not_overwrite_an_edit_made_while_indexing(store):
    assert isinstance(store, DocumentWrites)  # the pipeline's group write goes to the store
    store.add_document(doc("a", {"team": "before"}, category="notes"))
    first = chunks_of(store.get_document(WS, "doc-a"), 3)
    store.replace_chunks(WS, "doc-a", first)
    # The pipeline reads the document and claims it ...
    claimed = store.get_document(WS, "doc-a")
    claimed.status = DocumentStatus.INDEXING
    assert write_documents(store, [DocumentWrite(claimed)]) == [[]]
    # ... a person edits its metadata meanwhile ...
    edited = store.get_document(WS, "doc-a")
    edited.metadata = check_metadata({"team": "after", "year": 2024})
    store.save_document(edited, if_revision=edited.revision)
    # ... and the pipeline saves the copy it read, with the chunks it made.
    claimed.status, claimed.chunk_count = DocumentStatus.COMPLETED, 2
    kept, new = first[0], chunks_of(claimed, 2)[1]
    [removed] = write_documents(store, [DocumentWrite(claimed, [kept, new])])
    assert sorted(removed) == sorted(c.id for c in first[1:])
    stored = store.get_document(WS, "doc-a")
    assert stored.metadata == {"team": "after", "year": 2024.0}  # the edit survives
    assert (stored.status, stored.chunk_count) == (DocumentStatus.COMPLETED, 2)
    assert stored.category == "notes"
    assert store.get_chunks(WS, "doc-a") == [kept, new]
    assert store.count_chunks(WS) == 2


def test_the_pipeline_leaves_a_deleted_or_newer_document_alone(store):
    for name in ("gone", "newer", "fine"):
        store.add_document(doc(name, {"n": 1}))
    copies = {name: store.get_document(WS, f"doc-{name}") for name in ("gone", "newer", "fine")}
    store.delete_document(WS, "doc-gone")
    moved_on = store.get_document(WS, "doc-newer")
    moved_on.revision = 2
    store.save_document(moved_on, if_revision=1)
    for copy in copies.values():
        copy.status = DocumentStatus.COMPLETED
    removed = write_documents(store, [DocumentWrite(c, chunks_of(c, 1)) for c in copies.values()])
    assert removed == [None, None, []]
    assert store.get_document(WS, "doc-gone") is None
    assert store.get_document(WS, "doc-newer").status is DocumentStatus.PENDING
    assert store.get_chunks(WS, "doc-newer") == []
    assert store.get_document(WS, "doc-fine").status is DocumentStatus.COMPLETED


# filtered listings ------------------------------------------------------------------------

LIBRARY = {
    "alpha": ({"team": "legal", "year": 2021, "tags": ["lease", "harbour"]}, "manuals"),
    "beta": ({"team": "ops", "year": 2023, "tags": ["harbour"], "signed": "2023-11-30"}, None),
    "gamma": ({"team": "legal", "year": 2024.5, "日本語キー": "値"}, "notes"),
    "delta": ({}, "manuals"),
    "epsilon": ({"year": -1, "signed": "2021-03-04"}, None),
}

LISTING_CASES = [
    ({"equals": {"key": "team", "value": "legal"}}, ["alpha", "gamma"]),
    ({"equals": {"key": "year", "value": 2023}}, ["beta"]),
    ({"equals": {"key": "tags", "value": "harbour"}}, ["alpha", "beta"]),
    ({"equals": {"key": "日本語キー", "value": "値"}}, ["gamma"]),
    ({"in": {"key": "team", "values": ["ops", "none"]}}, ["beta"]),
    ({"range": {"key": "year", "gt": 2021, "lte": 2024.5}}, ["beta", "gamma"]),
    ({"range": {"key": "year", "lt": 0}}, ["epsilon"]),
    ({"range": {"key": "signed", "gte": "2022-01-01"}}, ["beta"]),
    ({"exists": {"key": "signed"}}, ["beta", "epsilon"]),
    ({"equals": {"key": "category", "value": "manuals"}}, ["alpha", "delta"]),
    (
        {"andAll": [{"exists": {"key": "tags"}}, {"range": {"key": "year", "lt": 2022}}]},
        ["alpha"],
    ),
    (
        {
            "orAll": [
                {"equals": {"key": "category", "value": "notes"}},
                {"andAll": [{"exists": {"key": "signed"}}, {"range": {"key": "year", "lt": 0}}]},
            ]
        },
        ["epsilon", "gamma"],
    ),
    ({"equals": {"key": "team", "value": "nobody"}}, []),
]


@pytest.fixture
def listed_store(store):
    for name, (metadata, category) in LIBRARY.items():
        store.add_document(doc(name, metadata, category=category))
        # Another workspace's files answer to the same filters; they are never listed.
        store.add_document(doc(name, metadata, category=category, ws=OTHER))
    return store


@pytest.mark.parametrize(("raw", "expected"), LISTING_CASES)
def test_the_library_listing_and_the_search_resolution_filter_alike(listed_store, raw, expected):
    flt = parse_filter(raw)
    reference = sorted(
        name
        for name, (md, cat) in LIBRARY.items()
        if matches(flt, terms_of(check_metadata(md), cat))
    )
    assert reference == expected
    page = listed_store.find_documents(
        WS, DocumentQuery(sort="name", descending=False, filter=flt), limit=10
    )
    assert [d.name.removesuffix(".txt") for d in page.documents] == expected
    assert page.total == len(expected)
    assert all(d.workspace_id == WS for d in page.documents)
    assert listed_store.documents_matching(WS, flt) == {f"doc-{n}" for n in expected}
    # By date (newest first) with a filter is not the index's order: the same documents.
    by_date = listed_store.find_documents(WS, DocumentQuery(filter=flt), limit=10)
    assert sorted(d.id for d in by_date.documents) == [f"doc-{n}" for n in expected]


def test_a_filtered_listing_pages_and_combines_with_the_name_query(listed_store):
    harbour = parse_filter({"exists": {"key": "year"}})
    query = DocumentQuery(sort="name", descending=False, filter=harbour)
    first = listed_store.find_documents(WS, query, limit=2)
    second = listed_store.find_documents(WS, query, limit=2, offset=2)
    assert first.total == second.total == 4
    names = [d.name for d in first.documents + second.documents]
    assert names == ["alpha.txt", "beta.txt", "epsilon.txt", "gamma.txt"]
    named = DocumentQuery(name="A", sort="name", descending=False, filter=harbour)
    page = listed_store.find_documents(WS, named, limit=10)
    assert [d.name for d in page.documents] == ["alpha.txt", "beta.txt", "gamma.txt"]
    assert page.total == 3


class _Recorded:
    """The DynamoDB client, writing down each read's projection."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.reads: list[tuple[str, str | None]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def get_paginator(self, operation: str) -> Any:
        paginator = self._client.get_paginator(operation)
        reads = self.reads

        class Recorded:
            def paginate(self, **kwargs: Any) -> Any:
                reads.append((operation, kwargs.get("ProjectionExpression")))
                return paginator.paginate(**kwargs)

        return Recorded()


def test_resolving_a_filter_reads_only_ids_categories_and_metadata(listed_store):
    recorded = _Recorded(listed_store.table.client)
    listed_store.table.client = recorded
    flt = parse_filter({"equals": {"key": "team", "value": "legal"}})
    assert listed_store.documents_matching(WS, flt) == {"doc-alpha", "doc-gamma"}
    assert recorded.reads == [("query", "#id, #category, #metadata")]


# sources ----------------------------------------------------------------------------------


def test_an_item_without_a_source_reads_as_api_which_no_mirror_owns(store):
    """domain/sources.py: an item written without `source` (none Bunko wrote, but a table
    edited by hand may hold one) reads as `api`; the mirror's query for a door's source never
    returns it, and the one for `api` does, as it returns every other reading of `api`."""
    store.add_document(doc("old"))
    store.add_document(doc("dropped", source="drop"))
    store.table.client.update_item(
        TableName=TABLE, Key=items.serialize(items.doc_key(WS, "doc-old")),
        UpdateExpression="REMOVE #s", ExpressionAttributeNames={"#s": "source"},
    )  # fmt: skip
    assert "source" not in raw_item(store, WS, "doc-old")
    assert store.get_document(WS, "doc-old").source == "api"
    assert [d.id for d in store.iter_source_documents(WS, "drop")] == ["doc-dropped"]
    assert [d.id for d in store.iter_source_documents(WS, "api")] == ["doc-old"]
    assert list(store.iter_source_documents(OTHER, "drop")) == []
