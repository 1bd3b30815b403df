"""A library's totals (documents, bytes) as one counter item beside its documents.

Every document write that changes them (add, a save that changes the size, remove) carries
an `ADD` of its deltas on `WS#<ws>` / `TOTALS` in the same transaction as the document, so
the counter is exact whatever the concurrency: a listing's total and the storage quota read
one item instead of the whole library (DynamoDB charges for every item a query reads,
whatever its projection or `Select=COUNT`).

A library written before the counter existed has none, or one holding only the deltas since
(`counted` absent): its first read counts its documents once (a strongly consistent query of
its `DOC#` items) and sets the totals, conditioned on `seq` (which every delta bumps) being
the one read before counting, so a write landing meanwhile makes it count again.
"""

from __future__ import annotations

from typing import Any

from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.table import Table
from bunko.deploy_schema import PK, SK
from bunko.ports.metadata import LibraryTotals

_S = items.serialize
_RECOUNTS = 3
_NAMES = {"#d": "documents", "#b": "bytes", "#s": "seq", "#c": "counted"}


def totals_key(workspace_id: str) -> dict[str, str]:
    return {PK: items.ws_pk(workspace_id), SK: "TOTALS"}


def totals_op(workspace_id: str, documents: int, size: int) -> dict[str, Any]:
    """The transaction item that adds these deltas to the library's totals."""
    return {
        "Update": {
            "Key": _S(totals_key(workspace_id)),
            "UpdateExpression": "ADD #d :d, #b :b, #s :one",
            "ExpressionAttributeNames": {k: _NAMES[k] for k in ("#d", "#b", "#s")},
            "ExpressionAttributeValues": _S({":d": documents, ":b": size, ":one": 1}),
        }
    }


class LibraryCounters:
    def __init__(self, table: Table) -> None:
        self.table = table

    def read(self, workspace_id: str) -> LibraryTotals:
        item = self.table.get(totals_key(workspace_id))
        if item is not None and item.get("counted"):
            return LibraryTotals(documents=int(item["documents"]), bytes=int(item["bytes"]))
        return self._recount(workspace_id, item)

    def _recount(self, workspace_id: str, item: dict[str, Any] | None) -> LibraryTotals:
        totals = LibraryTotals(documents=0, bytes=0)
        for _ in range(_RECOUNTS):
            seq = item.get("seq") if item else None
            totals = self._count(workspace_id)
            condition = "attribute_not_exists(#s)" if seq is None else "#s = :seq"
            values: dict[str, Any] = {":n": totals.documents, ":b": totals.bytes, ":t": True}
            if seq is not None:
                values[":seq"] = seq
            try:
                self.table.client.update_item(
                    TableName=self.table.name,
                    Key=_S(totals_key(workspace_id)),
                    UpdateExpression="SET #d = :n, #b = :b, #c = :t",
                    ConditionExpression=condition,
                    ExpressionAttributeNames=_NAMES,
                    ExpressionAttributeValues=_S(values),
                )
                return totals
            except self.table.client.exceptions.ConditionalCheckFailedException:
                item = self.table.get(totals_key(workspace_id))  # a write landed: count again
                if item is not None and item.get("counted"):
                    return LibraryTotals(int(item["documents"]), int(item["bytes"]))
        return totals  # writes kept landing: this count, kept for the next read to redo

    def _count(self, workspace_id: str) -> LibraryTotals:
        documents = size = 0
        for item in self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :doc)",
            ExpressionAttributeValues=_S({":pk": items.ws_pk(workspace_id), ":doc": "DOC#"}),
            ProjectionExpression="#size",
            ExpressionAttributeNames={"#size": "size"},
            ConsistentRead=True,
        ):
            documents += 1
            size += int(item.get("size", 0))
        return LibraryTotals(documents=documents, bytes=size)
