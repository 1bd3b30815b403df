"""Upload options written before they moved onto the document (DynamoDB, on moto).

A document item written by an older Bunko has no `mode`; its options (mode, embeddingModelId)
sit in the settings item `SETTINGS#upload` / <document id> of the same table. Every read of
the document takes them from there (a page of them in one batch read), its next save writes
them onto the item, and deleting the document deletes that settings item too.
"""

from __future__ import annotations

import json

from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
from bunko.domain import Document
from bunko.domain.document_query import DocumentQuery
from tests.aws.stand_ins import TABLE, after_each_call

WS = "11111111-1111-4111-8111-111111111111"


def _older_item(store: DynamoDBMetadataStore, doc: Document, options: dict | None) -> None:
    """`doc` as an older Bunko stored it: no option attributes, the options beside it."""
    store.add_document(doc)
    store.table.client.update_item(
        TableName=TABLE,
        Key=items.serialize(items.doc_key(WS, doc.id)),
        UpdateExpression="REMOVE #m",
        ExpressionAttributeNames={"#m": "mode"},
    )
    if options is not None:
        key = items.legacy_options_key(doc.id)
        store.table.put({**key, "value": json.dumps(options)})


def _doc(name: str) -> Document:
    return Document(id=f"doc-{name}", workspace_id=WS, path=name, name=name, mime="text/plain")


def test_older_documents_read_their_options_from_where_they_were_kept(store):
    _older_item(store, _doc("p.txt"), {"mode": "precise", "embeddingModelId": "cfg-1"})
    _older_item(store, _doc("f.txt"), {"mode": "fast", "embeddingModelId": None})
    _older_item(store, _doc("n.txt"), None)  # never given options: the defaults
    store.add_document(_doc("new.txt"))  # written now: its own (default) options
    expected = {
        "doc-p.txt": ("precise", "cfg-1"),
        "doc-f.txt": ("fast", None),
        "doc-n.txt": ("fast", None),
        "doc-new.txt": ("fast", None),
    }

    def options(documents) -> dict:
        return {d.id: (d.mode, d.embedding_model_id) for d in documents}

    assert options(store.find_documents(WS, DocumentQuery(), limit=10).documents) == expected
    by_name = store.find_documents(WS, DocumentQuery(sort="name"), limit=10).documents
    assert options(by_name) == expected
    assert options(store.iter_documents(WS)) == expected
    assert options(store.list_documents(WS, limit=10)) == expected
    assert options(store.get_documents_by_ids(WS, list(expected))) == expected
    assert options([store.get_document_by_path(WS, "p.txt")]) == {
        "doc-p.txt": expected["doc-p.txt"]
    }

    # The next save writes them onto the item; a delete leaves nothing of them behind.
    doc = store.get_document(WS, "doc-p.txt")
    store.save_document(doc)
    assert store.table.get(items.doc_key(WS, doc.id))["mode"] == "precise"
    store.delete_document(WS, doc.id)
    assert store.table.get(items.legacy_options_key(doc.id)) is None


def test_the_options_are_read_in_one_batch_for_a_page(store):
    for n in range(5):
        _older_item(store, _doc(f"{n}.txt"), {"mode": "precise", "embeddingModelId": None})
    calls = []

    def read(parsed: dict) -> None:  # the items one BatchGetItem request returned
        calls.append(sum(len(found) for found in parsed["Responses"].values()))

    with after_each_call(store.table.client, "BatchGetItem", lambda params: True, read):
        page = store.find_documents(WS, DocumentQuery(), limit=10).documents
    assert [d.mode for d in page] == ["precise"] * 5
    assert calls == [5]
