"""Document writes as DynamoDB transactions: the document, its path claim, its category
counter, its library's totals (dynamodb/totals.py) and its entry in the library's name
catalog (dynamodb/names.py) change together or not at all.

Optimistic concurrency: each document item carries `ver`; an update or delete is conditioned
on the version it read. If another writer got there first the transaction is cancelled and
the write is retried from a fresh read (a few times, then ConflictError). Transactions that
collide with another in-flight transaction (TransactionConflict) are retried the same way.

The ingest pipeline's saves (`keep_metadata`) leave the metadata attribute as stored: the
pipeline saves a copy it read before it parsed and embedded the file, and an edit of the
metadata made meanwhile must outlive that save.
"""

from __future__ import annotations

import contextlib
from typing import Any

from bunko.adapters.aws.dynamodb import items, names
from bunko.adapters.aws.dynamodb.table import Table, TransactionCancelled
from bunko.adapters.aws.dynamodb.totals import totals_op
from bunko.deploy_schema import GSI2_PK, GSI2_SK
from bunko.domain import Document
from bunko.errors import ConflictError, NotFoundError, StaleError

_S = items.serialize
_ATTEMPTS = 5
_RETRYABLE = {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}


class DocumentWrites:
    def __init__(self, table: Table, *, catalog_cap: int = names.CAP) -> None:
        self.table = table
        self.catalog_cap = catalog_cap  # the name catalog's bucket cap (dynamodb/names.py)

    def add(self, document: Document) -> None:
        attributes = {
            **items.doc_key(document.workspace_id, document.id),
            **items.document_attributes(document),
            "ver": 1,
            "chunks_stored": 0,
        }
        ops: list[dict[str, Any]] = [
            {"Put": {"Item": _S(attributes), "ConditionExpression": "attribute_not_exists(pk)"}},
            {
                "Put": {
                    "Item": _S(
                        {
                            **items.path_key(document.workspace_id, document.path),
                            "document_id": document.id,
                        }
                    ),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ]
        if document.category:
            ops.append(_count(document.workspace_id, document.category, +1))
        ops.append(totals_op(document.workspace_id, +1, document.size))
        full = False  # the entry's catalog bucket is at its cap
        for attempt in range(_ATTEMPTS):
            sent = [
                *ops,
                names.set_op(
                    document.workspace_id, document, None, full=full, cap=self.catalog_cap
                ),
            ]
            try:
                self.table.transact(sent)
                return
            except TransactionCancelled as exc:
                if "ConditionalCheckFailed" in exc.reasons[:2]:
                    raise ConflictError(
                        f"a document with this id or path already exists: {document.path}"
                    ) from exc
                if not full and names.is_full(exc.reasons, sent):
                    full = True
                    continue
                _retry_or_raise(exc, attempt)

    def save(
        self, document: Document, *, if_revision: int | None = None, keep_metadata: bool = False
    ) -> None:
        full = False  # the entry's catalog bucket is at its cap
        for attempt in range(_ATTEMPTS):
            current = self.table.get(items.doc_key(document.workspace_id, document.id))
            if current is None:
                raise NotFoundError(f"document {document.id} not found")
            # The update is conditional on `ver`, so a revision read here is still the one
            # stored when the write lands (a race re-reads and checks again).
            if if_revision is not None and int(current["revision"]) != if_revision:
                raise StaleError(f"document {document.id} is no longer at revision {if_revision}")
            ops = self._save_ops(document, current, keep_metadata)
            if names.changed(current, document):
                ops.append(
                    names.set_op(
                        document.workspace_id, document, current, full=full, cap=self.catalog_cap
                    )
                )
            try:
                self.table.transact(ops)
                return
            except TransactionCancelled as exc:
                if not full and names.is_full(exc.reasons, ops):
                    full = True
                    continue
                if len(exc.reasons) > 2 and exc.reasons[2] == "ConditionalCheckFailed":
                    raise ConflictError(f"path {document.path!r} is taken") from exc
                _retry_or_raise(exc, attempt, version_race=exc.reasons[0])

    def _save_ops(
        self, document: Document, current: dict[str, Any], keep_metadata: bool
    ) -> list[dict[str, Any]]:
        ws = document.workspace_id
        attributes = items.document_attributes(document)
        if keep_metadata:
            del attributes["metadata"]  # neither set nor removed
        present = {
            k: v for k, v in attributes.items() if v is not None and k not in ("id", "workspace_id")
        }
        absent = [k for k, v in attributes.items() if v is None]
        if not document.category:
            absent += [GSI2_PK, GSI2_SK]
        names = {f"#a{i}": name for i, name in enumerate(present)}
        names.update({f"#r{i}": name for i, name in enumerate(absent)})
        values = {f":v{i}": value for i, value in enumerate(present.values())}
        sets = [f"#a{i} = :v{i}" for i in range(len(present))]
        expression = "SET " + ", ".join([*sets, "ver = ver + :one"])
        if absent:
            expression += " REMOVE " + ", ".join(f"#r{i}" for i in range(len(absent)))
        ops: list[dict[str, Any]] = [
            {
                "Update": {
                    "Key": _S(items.doc_key(ws, document.id)),
                    "UpdateExpression": expression,
                    "ConditionExpression": "ver = :ver",
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": _S({**values, ":one": 1, ":ver": current["ver"]}),
                }
            }
        ]
        if current["path"] != document.path:
            ops.append({"Delete": {"Key": _S(items.path_key(ws, current["path"]))}})
            ops.append(
                {
                    "Put": {
                        "Item": _S(
                            {**items.path_key(ws, document.path), "document_id": document.id}
                        ),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
            )
        old_category, new_category = current.get("category"), document.category
        if old_category != new_category:
            if old_category:
                ops.append(_count(ws, old_category, -1))
            if new_category:
                ops.append(_count(ws, new_category, +1))
        grown = document.size - int(current.get("size", 0))  # a new revision's size
        if grown:
            ops.append(totals_op(ws, 0, grown))
        return ops

    def remove(self, document: Document) -> bool:
        """Delete the document item, its path claim and its count; False if already gone."""
        ws = document.workspace_id
        for attempt in range(_ATTEMPTS):
            current = self.table.get(items.doc_key(ws, document.id))
            if current is None:
                return False
            ops: list[dict[str, Any]] = [
                {
                    "Delete": {
                        "Key": _S(items.doc_key(ws, document.id)),
                        "ConditionExpression": "ver = :ver",
                        "ExpressionAttributeValues": _S({":ver": current["ver"]}),
                    }
                },
                {
                    "Delete": {
                        "Key": _S(items.path_key(ws, current["path"])),
                        "ConditionExpression": "document_id = :id",
                        "ExpressionAttributeValues": _S({":id": document.id}),
                    }
                },
            ]
            if current.get("category"):
                ops.append(_count(ws, current["category"], -1))
            ops.append(totals_op(ws, -1, -int(current.get("size", 0))))
            ops.append(names.remove_op(ws, current))
            try:
                self.table.transact(ops)
                return True
            except TransactionCancelled as exc:
                _retry_or_raise(exc, attempt, version_race=exc.reasons[0])
        return False

    def add_chunk_count(self, workspace_id: str, document_id: str, delta: int) -> None:
        if delta == 0:
            return
        # ADD is atomic and does not touch `ver`: chunk writes never race document saves.
        with contextlib.suppress(self.table.client.exceptions.ConditionalCheckFailedException):
            # A missing document was deleted meanwhile; its chunks went with it.
            self.table.client.update_item(
                TableName=self.table.name,
                Key=_S(items.doc_key(workspace_id, document_id)),
                UpdateExpression="ADD chunks_stored :d",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues=_S({":d": delta}),
            )


def _count(workspace_id: str, category: str, delta: int) -> dict[str, Any]:
    return {
        "Update": {
            "Key": _S(items.category_key(workspace_id, category)),
            "UpdateExpression": "ADD n :d",
            "ExpressionAttributeValues": _S({":d": delta}),
        }
    }


def _retry_or_raise(exc: TransactionCancelled, attempt: int, *, version_race: str = "") -> None:
    retryable = version_race == "ConditionalCheckFailed" or _RETRYABLE & set(exc.reasons)
    if not retryable or attempt == _ATTEMPTS - 1:
        raise ConflictError(f"the document changed while it was being written ({exc})") from exc
