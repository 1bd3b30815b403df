"""The name catalog's own guarantees on DynamoDB (moto), beyond the listing contract: a
library from before it is built once and exactly, even with a write landing meanwhile; a
bucket at its cap turns the catalog off instead of failing a write, and filters stay exact."""

from __future__ import annotations

from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
from bunko.adapters.aws.dynamodb.table import Table
from bunko.adapters.local.files import FileBlobStore
from bunko.domain import Document
from bunko.domain.document_query import DocumentQuery, arrange
from tests.aws.dynamodb_reads import counted, fill
from tests.aws.stand_ins import TABLE, after_each_call


def _store(aws, tmp_path, **knobs) -> DynamoDBMetadataStore:
    blobs = FileBlobStore(tmp_path)
    return DynamoDBMetadataStore(aws.dynamodb, table_name=TABLE, blobs=blobs, **knobs)


def _doc(doc_id: str, path: str, size: int = 5) -> Document:
    return Document(id=doc_id, workspace_id="ws-old", path=path, name=path.rsplit("/", 1)[-1],
                    mime="text/markdown", size=size)  # fmt: skip


def _paths(store, name: str, **query) -> tuple[list[str], int]:
    page = store.find_documents("ws-old", DocumentQuery(name=name, **query), limit=100)
    return [d.path for d in page.documents], page.total


def _head(aws) -> dict:
    return Table(aws.dynamodb, TABLE).get({"pk": "WS#ws-old", "sk": "NAMES"}) or {}


def _reads_the_documents(params: dict) -> bool:
    """The catalog's read of a library's documents (the fields of their entries)."""
    return "#path" in params.get("ExpressionAttributeNames", {})


def test_a_library_from_before_the_catalog_is_built_once_and_exactly(aws, monkeypatch, tmp_path):
    """Its first filtered listing reads its documents and puts each bucket on the condition
    that its version is the one read before; a document added, one renamed and one deleted
    while it built make it build again, and the catalog kept holds all three."""
    store = _store(aws, tmp_path)
    fill(aws.dynamodb, "ws-old", 30)  # written as items: no catalog entries, no head
    store.add_document(_doc("early", "early/e.md"))  # since the catalog: an entry, no head
    calls = []

    def writes_land(parsed: dict) -> None:
        calls.append(parsed["Count"])
        if len(calls) == 1:  # after the documents were read, before the buckets are put
            store.add_document(_doc("late", "late/00003-late.md"))
            moved = store.get_document("ws-old", "doc-00004")
            moved.path, moved.name = "moved/00004-moved.md", "00004-moved.md"
            store.save_document(moved)
            assert store.delete_document("ws-old", "early")

    with after_each_call(aws.dynamodb, "Query", _reads_the_documents, writes_land):
        assert _paths(store, "BULK/0000", sort="name", descending=False) == (
            [f"bulk/{i:05d}.md" for i in (0, 1, 2, 3, 5, 6, 7, 8, 9)], 9,
        )  # fmt: skip
    assert calls == [31, 31]  # built again after the writes; answered from what it read
    assert _head(aws)["built"] is True
    with counted(monkeypatch) as reads:  # from now on: one query of the catalog, the page
        assert _paths(store, "-late") == (["late/00003-late.md"], 1)
        assert _paths(store, "early") == ([], 0)
        assert _paths(store, "MOVED") == (["moved/00004-moved.md"], 1)
    assert reads.requests == {"Query": 3, "BatchGetItem": 2}, reads.seen
    by_name = DocumentQuery(sort="name", descending=False)  # the shared rule, on every document
    truth = [d.path for d in arrange(store.iter_documents("ws-old"), by_name)]
    assert _paths(store, "", sort="name", descending=False) == (truth, 31)


def test_a_full_bucket_turns_the_catalog_off_and_filters_read_the_documents(aws, tmp_path):
    """DynamoDB refuses an item past 400 KB, which would fail the document's transaction: a
    write whose bucket would pass the cap writes the document without its entry and marks
    the catalog off, and filters read the documents from then on, as exact as before."""
    store = _store(aws, tmp_path)
    for i in range(3):
        store.add_document(_doc(f"d{i}", f"notes/n{i}.md"))
    assert _paths(store, "N1") == (["notes/n1.md"], 1)  # builds the catalog
    assert _head(aws)["built"] is True
    store = _store(aws, tmp_path, catalog_cap=1)  # every bucket is now past its cap
    store.add_document(_doc("d3", "notes/n3.md"))
    store.delete_document("ws-old", "d0")
    moved = store.get_document("ws-old", "d1")
    moved.path, moved.name = "notes/renamed.md", "renamed.md"
    store.save_document(moved)
    head = _head(aws)
    assert head["off"] is True and "built" not in head
    assert _paths(store, "n3") == (["notes/n3.md"], 1)
    assert _paths(store, "NOTES/", sort="name", descending=False) == (
        ["notes/n2.md", "notes/n3.md", "notes/renamed.md"], 3,
    )  # fmt: skip
    store = _store(aws, tmp_path)  # the cap back as deployed
    assert _paths(store, "renamed") == (["notes/renamed.md"], 1)  # off stays off: still exact
    assert _head(aws).get("off") is True
