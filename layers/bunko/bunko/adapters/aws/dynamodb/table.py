"""Thin helpers over the low-level DynamoDB client: paging, batches, transactions.

Batch calls may return unprocessed items under throttling; they are retried with
exponential backoff instead of being dropped. Transactions report why they were cancelled
per item, which the store turns into conflicts (uniqueness) or retries (optimistic
concurrency, transaction conflicts).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from bunko.adapters.aws.dynamodb.items import deserialize, serialize
from bunko.deploy_schema import PK, SK

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

_WRITE_BATCH = 25  # BatchWriteItem limit
_GET_BATCH = 100  # BatchGetItem limit
_MAX_ROUNDS = 8


class TransactionCancelled(Exception):
    """A transaction was cancelled; `reasons` has one code per item ('None' = fine)."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__(", ".join(reasons))
        self.reasons = reasons


class Table:
    def __init__(
        self, client: DynamoDBClient, name: str, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.client = client
        self.name = name
        self._sleep = sleep

    def get(self, key: dict[str, str]) -> dict[str, Any] | None:
        response = self.client.get_item(
            TableName=self.name, Key=serialize(key), ConsistentRead=True
        )
        item = response.get("Item")
        return deserialize(item) if item else None

    def put(self, item: dict[str, Any], **kwargs: Any) -> None:
        self.client.put_item(TableName=self.name, Item=serialize(item), **kwargs)

    def query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every item of a query, page by page (pass KeyConditionExpression etc.)."""
        return self._items("query", kwargs)

    def scan(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        return self._items("scan", kwargs)

    def _items(self, operation: str, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
        pages = self.client.get_paginator(operation).paginate(TableName=self.name, **kwargs)
        for page in pages:
            for item in page.get("Items", []):
                yield deserialize(item)

    def count(self, **kwargs: Any) -> int:
        kwargs = {"TableName": self.name, "Select": "COUNT", **kwargs}
        total = 0
        while True:
            response = self.client.query(**kwargs)
            total += response.get("Count", 0)
            last = response.get("LastEvaluatedKey")
            if not last:
                return total
            kwargs["ExclusiveStartKey"] = last

    def partition(self, pk: str, sk_prefix: str) -> Iterator[dict[str, Any]]:
        return self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=serialize({":pk": pk, ":prefix": sk_prefix}),
            ConsistentRead=True,
        )

    def batch_get(self, keys: Sequence[dict[str, str]]) -> list[dict[str, Any]]:
        """The items that exist, in no particular order."""
        found: list[dict[str, Any]] = []
        for start in range(0, len(keys), _GET_BATCH):
            pending: dict[str, Any] = {
                self.name: {
                    "Keys": [serialize(k) for k in keys[start : start + _GET_BATCH]],
                    "ConsistentRead": True,
                }
            }
            for attempt in range(_MAX_ROUNDS):
                response = self.client.batch_get_item(RequestItems=pending)
                found.extend(deserialize(i) for i in response["Responses"].get(self.name, []))
                pending = response.get("UnprocessedKeys") or {}
                if not pending:
                    break
                self._backoff(attempt)
            else:
                raise RuntimeError("DynamoDB kept throttling a batch read")
        return found

    def batch_write(
        self, puts: Sequence[dict[str, Any]] = (), deletes: Sequence[dict[str, str]] = ()
    ) -> None:
        requests = [{"PutRequest": {"Item": serialize(i)}} for i in puts]
        requests += [{"DeleteRequest": {"Key": serialize(k)}} for k in deletes]
        for start in range(0, len(requests), _WRITE_BATCH):
            pending = {self.name: requests[start : start + _WRITE_BATCH]}
            for attempt in range(_MAX_ROUNDS):
                response = self.client.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
                if not pending:
                    break
                self._backoff(attempt)
            else:
                raise RuntimeError("DynamoDB kept throttling a batch write")

    def transact(self, items: list[dict[str, Any]]) -> None:
        """TransactWriteItems; raises TransactionCancelled with the per-item reasons."""
        for item in items:
            for body in item.values():
                body["TableName"] = self.name
        try:
            self.client.transact_write_items(TransactItems=items)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise
            reasons = exc.response.get("CancellationReasons") or _reasons_from_message(exc)
            raise TransactionCancelled(
                [r.get("Code", "None") if isinstance(r, dict) else r for r in reasons]
            ) from exc

    def _backoff(self, attempt: int) -> None:
        self._sleep(min(0.05 * 2**attempt, 2.0))


def key_only(item: dict[str, Any]) -> dict[str, str]:
    return {PK: item[PK], SK: item[SK]}


def _reasons_from_message(exc: ClientError) -> list[str]:
    # Some SDK paths only put the reasons in the message: "... [None, ConditionalCheckFailed]".
    message = exc.response.get("Error", {}).get("Message", "")
    inside = message[message.rfind("[") + 1 : message.rfind("]")] if "[" in message else ""
    return [part.strip() for part in inside.split(",") if part.strip()]
