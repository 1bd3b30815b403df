"""A library's name catalog: what a name filter and the orders other than by date read
instead of the library's documents.

DynamoDB keys match a whole value or a prefix, so no index finds "any case-insensitive part
of a name or path"; an item per n-gram of every name would cost tens of writes per document
(past a transaction's 100 items for a long path) and still read every document holding a
common n-gram. So the catalog is a compact copy of what a listing filters and orders by,
packed into a few items read in one query and filtered in memory:

- `WS#<ws>` / `NAMES#<bucket>` (BUCKETS of them, a document's by a hash of its id) holds one
  attribute per document, `d<id>` = [path, created_at in microseconds, size, mime, and its
  name only when it is not the path's last part], plus `v` (bumped by every change) and `b`
  (the entries' bytes). A query is billed by the bytes it reads, summed and rounded up to
  4 KB, not by items: the catalog reads ~55-100 bytes per document where the documents'
  items are ~0.5-1 KB each (an update is billed by the whole item's size, hence many small
  buckets: ~2-4 KB each at 10,000 documents);
- every document write that changes an entry (add, move or rename, a new revision's size or
  type, delete) sets or removes it in the same transaction as the document, so the catalog
  is exact whatever the concurrency;
- `WS#<ws>` / `NAMES` says the catalog is `built`. A library written before the catalog has
  none (its buckets hold only the entries written since): its first filtered listing reads
  its documents once (strongly consistent), then puts each bucket conditioned on the `v` it
  read before, so a write landing meanwhile makes it build again (at most three times; the
  listing is answered from the documents it read either way);
- a bucket never passes CAP bytes (a knob of the catalog and its writes) (DynamoDB's items hold 400 KB): a write that would pass
  it writes the document without its entry and marks the catalog `off` instead, and filters
  read the documents again from then on (256 buckets of 390,000 bytes hold close to a
  million entries of ~100 bytes).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.table import Table
from bunko.deploy_schema import PK, SK
from bunko.domain import Document

_S = items.serialize
BUCKETS = 256
CAP = 390_000  # the default cap of a bucket's entries, in bytes
_HEAD = "NAMES"
_BUILDS = 3
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# What an entry is made of, read from a document item.
_PROJECTION = "#id, #path, #name, #size, #mime, #created"
_PROJECTED = {
    "#id": "id", "#path": "path", "#name": "name", "#size": "size", "#mime": "mime",
    "#created": "created_at",
}  # fmt: skip


def bucket_sk(document_id: str) -> str:
    digest = hashlib.sha256(document_id.encode()).digest()
    return f"{_HEAD}#{int.from_bytes(digest[:4], 'big') % BUCKETS:03d}"


def _key(workspace_id: str, sk: str) -> dict[str, str]:
    return {PK: items.ws_pk(workspace_id), SK: sk}


def _micros(created_at: datetime | str) -> int:
    when = datetime.fromisoformat(created_at) if isinstance(created_at, str) else created_at
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - _EPOCH) // timedelta(microseconds=1)


def _entry(name: str, path: str, created_at: datetime | str, size: int, mime: str) -> list:
    entry: list[Any] = [path, _micros(created_at), int(size), mime]
    if name != path.rsplit("/", 1)[-1]:
        entry.append(name)
    return entry


def _of_document(document: Document) -> list:
    return _entry(document.name, document.path, document.created_at, document.size, document.mime)


def _of_item(item: dict[str, Any]) -> list:
    return _entry(
        item["name"], item["path"], item["created_at"], item.get("size", 0), item.get("mime", "")
    )


def _bytes(document_id: str, entry: list) -> int:
    """The entry's share of its bucket as DynamoDB sizes items (name, list overhead, values)."""
    size = len(document_id.encode()) + 1 + 3
    for value in entry:
        if isinstance(value, str):
            size += 1 + len(value.encode())
        else:
            size += 1 + (len(str(abs(value)).strip("0") or "0") + 1) // 2 + 1
    return size


def row(document_id: str, entry: list) -> dict[str, Any]:
    path, micros, size, mime, *name = entry
    return {
        "id": document_id,
        "path": path,
        "name": name[0] if name else path.rsplit("/", 1)[-1],
        "size": int(size),
        "mime": mime,
        "created_at": _EPOCH + timedelta(microseconds=int(micros)),
    }


def changed(current: dict[str, Any], document: Document) -> bool:
    """Whether a save changes the document's entry."""
    return _of_item(current) != _of_document(document)


def set_op(
    workspace_id: str,
    document: Document,
    current: dict[str, Any] | None,
    *,
    full: bool = False,
    cap: int = CAP,
) -> dict[str, Any]:
    """The transaction item that sets the document's entry (`current`: its item before this
    write, if any), within the bucket's `cap`; `full`: the cap was met, so mark the catalog off."""
    if full:
        return _off_op(workspace_id)
    entry = _of_document(document)
    grown = _bytes(document.id, entry)
    if current is not None:
        grown -= _bytes(document.id, _of_item(current))
    return {
        "Update": {
            "Key": _S(_key(workspace_id, bucket_sk(document.id))),
            "UpdateExpression": "SET #e = :e ADD #v :one, #b :grown",
            "ConditionExpression": "attribute_not_exists(#b) OR #b <= :room",
            "ExpressionAttributeNames": {"#e": f"d{document.id}", "#v": "v", "#b": "b"},
            "ExpressionAttributeValues": _S(
                {":e": entry, ":one": 1, ":grown": grown, ":room": cap - grown}
            ),
        }
    }


def remove_op(workspace_id: str, current: dict[str, Any]) -> dict[str, Any]:
    document_id = current["id"]
    return {
        "Update": {
            "Key": _S(_key(workspace_id, bucket_sk(document_id))),
            "UpdateExpression": "REMOVE #e ADD #v :one, #b :gone",
            "ExpressionAttributeNames": {"#e": f"d{document_id}", "#v": "v", "#b": "b"},
            "ExpressionAttributeValues": _S(
                {":one": 1, ":gone": -_bytes(document_id, _of_item(current))}
            ),
        }
    }


def is_full(reasons: list[str], ops: list[dict[str, Any]]) -> bool:
    """Whether a cancelled transaction failed on its catalog entry's cap."""
    return any(
        reason == "ConditionalCheckFailed"
        and op.get("Update", {}).get("Key", {}).get(SK, {}).get("S", "").startswith(f"{_HEAD}#")
        for reason, op in zip(reasons, ops, strict=False)
    )


def _off_op(workspace_id: str) -> dict[str, Any]:
    return {
        "Update": {
            "Key": _S(_key(workspace_id, _HEAD)),
            "UpdateExpression": "SET #off = :t REMOVE #built",
            "ExpressionAttributeNames": {"#off": "off", "#built": "built"},
            "ExpressionAttributeValues": _S({":t": True}),
        }
    }


class NameCatalog:
    def __init__(self, table: Table, *, cap: int = CAP) -> None:
        self.table = table
        self.cap = cap  # a bucket's entries never pass it (the writes hold the same cap)

    def _read(self, workspace_id: str, *, consistent: bool) -> list[dict[str, Any]]:
        return list(
            self.table.query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :names)",
                ExpressionAttributeValues=_S({":pk": items.ws_pk(workspace_id), ":names": _HEAD}),
                ConsistentRead=consistent,
            )
        )

    def rows(self, workspace_id: str) -> list[dict[str, Any]] | None:
        """Every document's id, name, path, size, mime and created_at (one query of the
        catalog), built first for a library from before it; None if the catalog is off."""
        found = self._read(workspace_id, consistent=False)
        head = next((i for i in found if i[SK] == _HEAD), {})
        if head.get("off"):
            return None
        if head.get("built"):
            return _rows(found)
        return self._build(workspace_id)

    def _build(self, workspace_id: str) -> list[dict[str, Any]] | None:
        rows: list[dict[str, Any]] = []
        for _ in range(_BUILDS):
            versions = {i[SK]: i.get("v") for i in self._read(workspace_id, consistent=True)}
            documents = self._documents(workspace_id)
            buckets: dict[str, dict[str, list]] = {}
            for document in documents:
                buckets.setdefault(bucket_sk(document["id"]), {})[document["id"]] = _of_item(
                    document
                )
            rows = [row(d, e) for entries in buckets.values() for d, e in entries.items()]
            if any(_size(entries) > self.cap for entries in buckets.values()):
                self.table.transact([_off_op(workspace_id)])
                return rows
            if self._put_buckets(workspace_id, versions, buckets):
                # a write that found a bucket full meanwhile keeps the catalog off
                with contextlib.suppress(
                    self.table.client.exceptions.ConditionalCheckFailedException
                ):
                    self.table.client.update_item(
                        TableName=self.table.name,
                        Key=_S(_key(workspace_id, _HEAD)),
                        UpdateExpression="SET #built = :t",
                        ConditionExpression="attribute_not_exists(#off)",
                        ExpressionAttributeNames={"#built": "built", "#off": "off"},
                        ExpressionAttributeValues=_S({":t": True}),
                    )
                return rows
        return rows  # writes kept landing: these rows, and the next filter builds again

    def _documents(self, workspace_id: str) -> list[dict[str, Any]]:
        """The fields of every document's entry, strongly consistent."""
        return list(
            self.table.query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :doc)",
                ExpressionAttributeValues=_S({":pk": items.ws_pk(workspace_id), ":doc": "DOC#"}),
                ProjectionExpression=_PROJECTION,
                ExpressionAttributeNames=_PROJECTED,
                ConsistentRead=True,
            )
        )

    def _put_buckets(
        self,
        workspace_id: str,
        versions: dict[str, Any],
        buckets: dict[str, dict[str, list]],
    ) -> bool:
        """Put each bucket whole, on the condition that no write changed it since its version
        was read; False if one had changed (that bucket is left as the write made it)."""
        settled = True
        for sk in sorted((set(versions) - {_HEAD}) | set(buckets)):
            entries = buckets.get(sk, {})
            seen = versions.get(sk)
            item = {
                **_key(workspace_id, sk),
                "v": int(seen or 0) + 1,
                "b": _size(entries),
                **{f"d{d}": e for d, e in entries.items()},
            }
            extra: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
            if seen is not None:
                extra = {
                    "ConditionExpression": "#v = :v",
                    "ExpressionAttributeNames": {"#v": "v"},
                    "ExpressionAttributeValues": _S({":v": seen}),
                }
            try:
                self.table.put(item, **extra)
            except self.table.client.exceptions.ConditionalCheckFailedException:
                settled = False
        return settled


def _size(entries: dict[str, list]) -> int:
    return sum(_bytes(d, e) for d, e in entries.items())


def _rows(found: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        row(name[1:], entry)
        for item in found
        if item[SK] != _HEAD
        for name, entry in item.items()
        if name.startswith("d") and isinstance(entry, list)
    ]
