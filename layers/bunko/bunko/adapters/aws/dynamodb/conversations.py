"""DynamoDBConversationStore: chat conversations in the single table (infra/TABLE_DESIGN.md,
"Conversations").

A conversation's head and its messages share one partition, so one strongly consistent query
reads it whole. The owner's list is gsi2 (`WS#<ws>#CONVS`, sorted by owner then last
activity), which the table already has. Appending is one transaction: the messages
(`attribute_not_exists`) and the head's count, conditioned on the count read, so two answers
saved at once never take the same place. Retention writes the table's TTL attribute.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table, TransactionCancelled, key_only
from bunko.deploy_schema import GSI2, GSI2_PK, GSI2_SK, PK, SK, TTL_ATTRIBUTE
from bunko.domain import utcnow
from bunko.domain.conversations import Conversation, ConversationFullError, Message
from bunko.errors import ConflictError

_S = serialize
_HEAD = "CONV"
# Answers saved at once retry after a lost race, each after a short random pause so they
# stop colliding. A writer loses at most once per answer that another writer saved, so with
# eight at once (the contract's test) seven attempts always end in a save or in "full";
# five failed under a loaded test run.
_ATTEMPTS = 10
_PAUSE_SECONDS = 0.005


def _pk(ws: str, conversation_id: str) -> str:
    return f"WS#{ws}#CONV#{conversation_id}"


def _list_pk(ws: str) -> str:
    return f"WS#{ws}#CONVS"


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _order(owner: str, updated_at: datetime, conversation_id: str) -> str:
    # Owner ids hold no "#" (a user id, or workspace:<id>), so "<owner>#" is the owner's prefix.
    return f"{owner}#{_iso(updated_at)}#{conversation_id}"


def _expiry(value: datetime | None) -> dict[str, Any]:
    if value is None:
        return {}
    # Never before the exact time the reads go by.
    return {"expires_at": _iso(value), TTL_ATTRIBUTE: math.ceil(value.timestamp())}


def _live(item: dict[str, Any], now: str) -> bool:
    return "expires_at" not in item or item["expires_at"] > now


def _head(item: dict[str, Any]) -> Conversation:
    expires = item.get("expires_at")
    return Conversation(
        id=item["id"],
        workspace_id=item["workspace_id"],
        owner=item["owner"],
        title=item.get("title"),
        message_count=int(item["message_count"]),
        created_at=datetime.fromisoformat(item["created_at"]),
        updated_at=datetime.fromisoformat(item["updated_at"]),
        expires_at=datetime.fromisoformat(expires) if expires else None,
    )


def _message(item: dict[str, Any]) -> Message:
    expires = item.get("expires_at")
    return Message(
        role=item["role"],
        content=item["content"],
        sources=json.loads(item["sources"]),
        created_at=datetime.fromisoformat(item["created_at"]),
        truncated=bool(item.get("truncated")),
        expires_at=datetime.fromisoformat(expires) if expires else None,
    )


class DynamoDBConversationStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def add(self, conversation: Conversation) -> None:
        c = conversation
        item = {
            PK: _pk(c.workspace_id, c.id),
            SK: _HEAD,
            GSI2_PK: _list_pk(c.workspace_id),
            GSI2_SK: _order(c.owner, c.updated_at, c.id),
            "id": c.id,
            "workspace_id": c.workspace_id,
            "owner": c.owner,
            "title": c.title,
            "message_count": 0,
            "created_at": _iso(c.created_at),
            "updated_at": _iso(c.updated_at),
            **_expiry(c.expires_at),
        }
        try:
            self.table.put(item, ConditionExpression="attribute_not_exists(pk)")
        except self.table.client.exceptions.ConditionalCheckFailedException as exc:
            raise ConflictError(f"conversation {c.id} already exists") from exc

    def _head_item(self, ws: str, owner: str, conversation_id: str) -> dict[str, Any] | None:
        item = self.table.get({PK: _pk(ws, conversation_id), SK: _HEAD})
        if item is None or item["owner"] != owner or not _live(item, _iso(utcnow())):
            return None
        return item

    def _items(self, ws: str, conversation_id: str) -> list[dict[str, Any]]:
        """The head and the messages, in order (the head's sort key sorts before MSG#)."""
        return list(
            self.table.query(
                KeyConditionExpression="pk = :pk",
                ConsistentRead=True,
                ExpressionAttributeValues=_S({":pk": _pk(ws, conversation_id)}),
            )
        )

    def get(
        self, workspace_id: str, owner: str, conversation_id: str, *, messages: bool = True
    ) -> Conversation | None:
        if not messages:
            item = self._head_item(workspace_id, owner, conversation_id)
            return _head(item) if item else None
        items = self._items(workspace_id, conversation_id)
        head = next((i for i in items if i[SK] == _HEAD), None)
        now = _iso(utcnow())
        if head is None or head["owner"] != owner or not _live(head, now):
            return None
        found = _head(head)
        found.messages = [_message(i) for i in items if i[SK].startswith("MSG#") and _live(i, now)]
        return found

    def _heads(self, ws: str, owner: str | None) -> Iterator[dict[str, Any]]:
        """Heads of the workspace (of one owner), most recently active first; expired too."""
        condition = "gsi2pk = :pk"
        values: dict[str, Any] = {":pk": _list_pk(ws)}
        if owner is not None:
            condition += " AND begins_with(gsi2sk, :owner)"
            values[":owner"] = f"{owner}#"
        return self.table.query(
            IndexName=GSI2,
            KeyConditionExpression=condition,
            ScanIndexForward=False,
            ExpressionAttributeValues=_S(values),
        )

    def list_conversations(
        self, workspace_id: str, owner: str, *, limit: int, offset: int = 0
    ) -> list[Conversation]:
        now = _iso(utcnow())
        live = (i for i in self._heads(workspace_id, owner) if _live(i, now))
        return [_head(i) for i in islice(live, offset, offset + limit)]

    def count(self, workspace_id: str, owner: str) -> int:
        now = _iso(utcnow())
        return sum(1 for i in self._heads(workspace_id, owner) if _live(i, now))

    def rename(
        self, workspace_id: str, owner: str, conversation_id: str, title: str
    ) -> Conversation | None:
        if self._head_item(workspace_id, owner, conversation_id) is None:
            return None
        try:
            self.table.client.update_item(
                TableName=self.table.name,
                Key=_S({PK: _pk(workspace_id, conversation_id), SK: _HEAD}),
                UpdateExpression="SET #title = :title",
                ConditionExpression="attribute_exists(pk) AND #owner = :owner",
                ExpressionAttributeNames={"#title": "title", "#owner": "owner"},
                ExpressionAttributeValues=_S({":title": title, ":owner": owner}),
            )
        except self.table.client.exceptions.ConditionalCheckFailedException:
            return None  # deleted meanwhile
        return self.get(workspace_id, owner, conversation_id, messages=False)

    def append(
        self,
        workspace_id: str,
        owner: str,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        max_messages: int,
        title: str | None = None,
        expires_at: datetime | None = None,
    ) -> Conversation | None:
        for attempt in range(_ATTEMPTS):
            head = self._head_item(workspace_id, owner, conversation_id)
            if head is None:
                return None
            count = int(head["message_count"])
            if count + len(messages) > max_messages:
                raise ConversationFullError(max_messages)
            try:
                self.table.transact(
                    self._append_items(head, messages, title=title, expires_at=expires_at)
                )
            except TransactionCancelled:
                # Another answer took these places first: read the count again.
                time.sleep(random.uniform(0, _PAUSE_SECONDS * (attempt + 1)))
                continue
            return self.get(workspace_id, owner, conversation_id, messages=False)
        raise ConflictError("the conversation kept changing while saving; try again")

    def _append_items(
        self,
        head: dict[str, Any],
        messages: Sequence[Message],
        *,
        title: str | None,
        expires_at: datetime | None,
    ) -> list[dict[str, Any]]:
        count, pk = int(head["message_count"]), head[PK]
        updated = (
            messages[-1].created_at if messages else datetime.fromisoformat(head["updated_at"])
        )
        values: dict[str, Any] = {
            ":next": count + len(messages),
            ":count": count,
            ":owner": head["owner"],
            ":updated": _iso(updated),
            ":order": _order(head["owner"], updated, head["id"]),
        }
        names = {"#owner": "owner", "#ttl": TTL_ATTRIBUTE}
        sets = "SET message_count = :next, updated_at = :updated, gsi2sk = :order"
        if title is not None:
            sets += ", #title = if_not_exists(#title, :title)"
            names["#title"] = "title"
            values[":title"] = title
        expiry = _expiry(expires_at)
        if expiry:
            sets += ", expires_at = :expires_at, #ttl = :ttl"
            values.update({":expires_at": expiry["expires_at"], ":ttl": expiry[TTL_ATTRIBUTE]})
        update = sets if expiry else f"{sets} REMOVE expires_at, #ttl"
        items: list[dict[str, Any]] = [
            {
                "Update": {
                    "Key": _S(key_only(head)),
                    "UpdateExpression": update,
                    "ConditionExpression": "message_count = :count AND #owner = :owner",
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": _S(values),
                }
            }
        ]
        for seq, m in enumerate(messages, start=count + 1):
            item = {
                PK: pk,
                SK: f"MSG#{seq:08d}",
                "role": m.role,
                "content": m.content,
                "sources": json.dumps(m.sources, ensure_ascii=False),
                "truncated": m.truncated,
                "created_at": _iso(m.created_at),
                **_expiry(m.expires_at),
            }
            items.append(
                {"Put": {"Item": _S(item), "ConditionExpression": "attribute_not_exists(pk)"}}
            )
        return items

    def _remove(self, ws: str, conversation_id: str) -> None:
        """Messages first, the head last: a delete that dies half-way finishes when run again."""
        items = self._items(ws, conversation_id)
        self.table.batch_write(deletes=[key_only(i) for i in items if i[SK] != _HEAD])
        self.table.batch_write(deletes=[{PK: _pk(ws, conversation_id), SK: _HEAD}])

    def delete(self, workspace_id: str, owner: str, conversation_id: str) -> bool:
        head = self.table.get({PK: _pk(workspace_id, conversation_id), SK: _HEAD})
        if head is None or head["owner"] != owner:
            return False
        self._remove(workspace_id, conversation_id)
        return _live(head, _iso(utcnow()))

    def _delete_heads(self, ws: str, heads: Iterator[dict[str, Any]]) -> int:
        ids = [h["id"] for h in heads]
        for conversation_id in ids:
            self._remove(ws, conversation_id)
        return len(ids)

    def delete_owner(self, workspace_id: str, owner: str) -> int:
        return self._delete_heads(workspace_id, self._heads(workspace_id, owner))

    def delete_workspace(self, workspace_id: str) -> int:
        return self._delete_heads(workspace_id, self._heads(workspace_id, None))

    def prune(self, now: datetime) -> int:
        return 0  # the table's TTL deletes expired items; reads already leave them out
