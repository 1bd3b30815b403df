"""What a listing, an upload and a presign cost in DynamoDB (issue 47, point 7). A default
listing counted the whole library (`Select=COUNT` is charged for every item it reads), and
every upload and presign summed every document's size for the storage quota. Now a
library's totals are a counter item written in the documents' own transactions, so each of
these requests reads the same items whether the library holds 10 documents or 10,000.

A name filter (any part of a name or path, in any case, with its exact total) read the whole
library's documents too; now it reads the library's name catalog (dynamodb/names.py): the
same requests at both sizes, at most its 256 packed buckets for items, and its bytes (what a
query is billed by) a fraction of the documents'.

Through the real api function on moto: two people, one with 10 documents and one with 10,000
(written straight to the table with batch writes, as a library from before the counter:
its first read counts it once). Every DynamoDB call of every client is counted, with the
items it read (ScannedCount for a query or scan, whatever it returns)."""

from __future__ import annotations

import base64
import json

import pytest

from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.table import Table
from bunko.domain import Document
from tests.aws.conftest import FakeLambdaContext
from tests.aws.dynamodb_reads import Reads, counted, fill, item_bytes
from tests.aws.handlers import api_event, presign, sign_in, user_workspace
from tests.aws.stand_ins import TABLE, after_each_call

BOUNDARY = "bunko-count-boundary"


def upload(api, token: str, name: str) -> None:
    data = b"# Counts\n\nA small note about counters.\n"
    body = (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: text/markdown\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )
    event = api_event("POST", "/upload", headers={
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Content-Length": str(len(body)),
    })  # fmt: skip
    event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 201, response["body"]


def listing(api, token: str, **params: str) -> tuple[int, int]:
    event = api_event("GET", "/knowledge-bases", headers={"Authorization": f"Bearer {token}"})
    params = {"limit": "10", **params}
    event["queryStringParameters"] = params
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in params.items()}
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 200, response["body"]
    return len(json.loads(response["body"])), int(
        {k.lower(): v for k, v in response["headers"].items()}["x-total-count"]
    )


@pytest.mark.slow  # 10,000 items written to moto
@pytest.mark.timeout(1800)  # moto writes them one by one: slow on a loaded machine
def test_listing_upload_and_presign_cost_the_same_at_10_and_10000_documents(
    api_with_accounts, aws_env, monkeypatch
):
    api = api_with_accounts
    cost: dict[int, dict[str, tuple[dict[str, int], int]]] = {}
    # Both people exist first, and each uploads once unmeasured: an upload's bill reads the
    # deployment's users once per function instance and new library (services/accounts/
    # bills.py), which follows the number of people, not the library's size.
    tokens = {person: sign_in(api, person) for person in ("small", "large")}
    for n, person in ((10, "small"), (10_000, "large")):
        token = tokens[person]
        workspace = user_workspace(person)
        fill(aws_env.dynamodb, workspace, n)
        with counted(monkeypatch) as first:  # a library from before the counter: counted once
            assert listing(api, token) == (10, n)
        assert first.items >= n
        upload(api, token, "warm.md")
        cost[n] = {}
        with counted(monkeypatch) as reads:
            assert listing(api, token) == (10, n + 1)
        cost[n]["listing"] = reads.seen
        with counted(monkeypatch) as reads:
            upload(api, token, "counts.md")
        cost[n]["upload"] = reads.seen
        with counted(monkeypatch) as reads:
            status, answer = presign(api, token, {"path": "big.pdf", "size": 10 * 1024**2})
            assert status == 200, answer
        cost[n]["presign"] = reads.seen
        assert listing(api, token) == (10, n + 2)  # the uploads counted
    assert cost[10] == cost[10_000], cost
    for requests, read in cost[10_000].values():
        assert "Scan" not in requests
        assert read <= 30, cost  # the person, their bill, the page: never the library


def test_a_library_from_before_the_counter_is_counted_once_and_exactly(aws, monkeypatch, tmp_path):
    """Its first read counts its documents; a document write landing during that count makes
    the count run again (the totals item's `seq` moved), so the totals kept are exact."""
    from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
    from bunko.adapters.aws.dynamodb.totals import totals_key
    from bunko.adapters.local.files import FileBlobStore
    from bunko.ports import LibraryTotals

    store = DynamoDBMetadataStore(aws.dynamodb, table_name=TABLE, blobs=FileBlobStore(tmp_path))
    fill(aws.dynamodb, "ws-old", 30)  # 30 documents of 100 bytes, no counter
    racing = Document(id="late", workspace_id="ws-old", path="late.md", name="late.md",
                      mime="text/markdown", size=5)  # fmt: skip
    calls = []

    def a_write_lands(parsed: dict) -> None:
        calls.append(parsed["Count"])
        if len(calls) == 1:
            store.add_document(racing)  # lands after the count read, before the totals are set

    def counts(params: dict) -> bool:  # the counter's read of the documents' sizes
        return params.get("ProjectionExpression") == "#size"

    with after_each_call(aws.dynamodb, "Query", counts, a_write_lands):
        assert store.library_totals("ws-old") == LibraryTotals(documents=31, bytes=3005)
    assert calls == [30, 31]  # counted again after the write
    # counted from now on: one item read, kept by the documents' transactions
    with counted(monkeypatch) as reads:
        assert store.library_totals("ws-old") == LibraryTotals(documents=31, bytes=3005)
    assert reads.seen == ({"GetItem": 1}, 1)
    assert store.delete_document("ws-old", "late")
    assert store.library_totals("ws-old") == LibraryTotals(documents=30, bytes=3000)
    assert Table(aws.dynamodb, TABLE).get(totals_key("ws-old"))["counted"] is True


def library_bytes(dynamodb, workspace_id: str) -> int:
    """The size of the library's document items: what a query of them is billed, whatever
    its projection."""
    found = (
        Table(dynamodb, TABLE)
        .client.get_paginator("query")
        .paginate(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :doc)",
            ExpressionAttributeValues={
                ":pk": {"S": items.ws_pk(workspace_id)},
                ":doc": {"S": "DOC#"},
            },
        )
    )
    return sum(item_bytes(i) for page in found for i in page["Items"])


@pytest.mark.slow  # 10,000 items written to moto
@pytest.mark.timeout(1800)  # moto writes them one by one: slow on a loaded machine
def test_a_name_filter_reads_the_name_catalog_not_the_library(
    api_with_accounts, aws_env, monkeypatch
):
    """A selective name filter (one match in either library) at 10 and 10,000 documents. The
    first one of a library from before the catalog builds it (reads the library once); from
    then on a filter reads the catalog's few packed items and the page, never the library."""
    api = api_with_accounts
    tokens = {person: sign_in(api, person) for person in ("small", "large")}
    cost: dict[int, Reads] = {}
    whole: dict[int, int] = {}
    for n, person in ((10, "small"), (10_000, "large")):
        token = tokens[person]
        workspace = user_workspace(person)
        fill(aws_env.dynamodb, workspace, n)
        upload(api, token, "warm.md")  # the person's bill and counters, read unmeasured
        with counted(monkeypatch) as first:
            assert listing(api, token, q="00007") == (1, 1)
        with counted(monkeypatch) as reads:
            assert listing(api, token, q="00007") == (1, 1)
        cost[n] = reads
        whole[n] = library_bytes(aws_env.dynamodb, workspace)
        print(
            f"\n{n} documents ({whole[n]} bytes of document items): first filter "
            f"{first.seen} {first.bytes} bytes; then {reads.seen} {reads.bytes} bytes"
        )
        with counted(monkeypatch) as wide:  # every document matches: the same catalog read
            assert listing(api, token, q=".MD", sort="name") == (10, n + 1)
        print(f"  unselective filter (sorted by name): {wide.seen} {wide.bytes} bytes")
    from bunko.adapters.aws.dynamodb.names import BUCKETS

    assert cost[10].requests == cost[10_000].requests, (cost[10].seen, cost[10_000].seen)
    assert "Scan" not in cost[10_000].requests
    # items: at most the catalog's buckets, its head and the page, whatever the library holds
    assert cost[10_000].items <= BUCKETS + 3, cost[10_000].seen
    # bytes: the catalog is a compact copy of names, far smaller than the documents' items
    assert cost[10_000].bytes * 4 < whole[10_000], (cost[10_000].bytes, whole[10_000])
