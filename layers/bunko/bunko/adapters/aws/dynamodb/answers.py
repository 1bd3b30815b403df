"""AnswerStore in the single table (infra/TABLE_DESIGN.md, "Answers and marks").

An answer is one item, `ANSWER#<library>` / `<answer>`. Two small pointer items list them:
`ANSWERMARK#<library>` / `<marked at>#<answer>` (the marked answers, last marked first; a
new mark replaces its pointer) and `ANSWERMISS#<library>` / `<asked at>#<answer>` (the
missing list). Each carries the answer's TTL, so retention removes the three together.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table
from bunko.deploy_schema import PK, SK, TTL_ATTRIBUTE
from bunko.domain.answers import AnswerMark, AnswerRecord

_PLAIN = tuple(
    [
        "library_id",
        "asker",
        "question",
        "answer",
        "door",
        "conversation_id",
        "turn",
        "mark",
        "comment",
        "marked_by",
    ]
)


def _iso(when: datetime | None) -> str | None:
    return when.astimezone(UTC).isoformat() if when else None


def _epoch(when: datetime | None) -> int | None:
    return math.floor(when.timestamp()) if when else None


def _key(library_id: str, answer_id: str) -> dict[str, str]:
    return {PK: f"ANSWER#{library_id}", SK: answer_id}


def _live(item: dict[str, Any], now: int) -> bool:
    expires = item.get(TTL_ATTRIBUTE)
    return expires is None or int(expires) > now


def _now() -> int:
    return math.floor(datetime.now(UTC).timestamp())


def _record(item: dict[str, Any]) -> AnswerRecord:
    turn = item.get("turn")
    return AnswerRecord(
        id=item[SK],
        **{name: item.get(name) for name in _PLAIN if name != "turn"},
        turn=int(turn) if turn is not None else None,
        sources=json.loads(item.get("sources") or "[]"),
        refused=bool(item.get("refused")),
        at=datetime.fromisoformat(item["at"]),
        expires_at=(
            datetime.fromtimestamp(int(item[TTL_ATTRIBUTE]), UTC)
            if item.get(TTL_ATTRIBUTE)
            else None
        ),
        collected=bool(item.get("collected")),
        marked_at=datetime.fromisoformat(item["marked_at"]) if item.get("marked_at") else None,
    )


class DynamoDBAnswerStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def _item(self, record: AnswerRecord, **pointers: str) -> dict[str, Any]:
        item: dict[str, Any] = {
            **_key(record.library_id, record.id),
            **{name: getattr(record, name) for name in _PLAIN},
            # one string: a source's fields stay as the door sent them (floats included)
            "sources": json.dumps(record.sources, ensure_ascii=False),
            "refused": record.refused,
            "collected": record.collected,
            "at": _iso(record.at),
            "marked_at": _iso(record.marked_at),
            **pointers,
        }
        if record.expires_at is not None:
            item[TTL_ATTRIBUTE] = _epoch(record.expires_at)
        return {k: v for k, v in item.items() if v is not None}

    def _pointer(self, kind: str, record: AnswerRecord, order: str) -> dict[str, Any]:
        item: dict[str, Any] = {
            PK: f"{kind}#{record.library_id}",
            SK: f"{order}#{record.id}",
            "answer_id": record.id,
        }
        if record.expires_at is not None:
            item[TTL_ATTRIBUTE] = _epoch(record.expires_at)
        return item

    def add(self, record: AnswerRecord) -> None:
        puts = [self._item(record)]
        if record.collected:
            miss = self._pointer("ANSWERMISS", record, _iso(record.at) or "")
            puts = [self._item(record, miss_sk=miss[SK]), miss]
        self.table.batch_write(puts)

    def get(self, library_id: str, answer_id: str) -> AnswerRecord | None:
        item = self.table.get(_key(library_id, answer_id))
        return _record(item) if item and _live(item, _now()) else None

    def set_mark(
        self,
        library_id: str,
        answer_id: str,
        marked: AnswerMark,
        *,
        collected: bool,
        expires_at: datetime | None,
    ) -> AnswerRecord | None:
        item = self.table.get(_key(library_id, answer_id))
        if not item or not _live(item, _now()):
            return None
        record = _record(item)
        record.mark, record.comment = marked.mark, marked.comment
        record.marked_by, record.marked_at = marked.marked_by, marked.marked_at
        record.expires_at = expires_at
        record.collected = record.collected or collected
        marks = self._pointer("ANSWERMARK", record, _iso(marked.marked_at) or "")
        puts = [marks]
        pointers = {"mark_sk": marks[SK]}
        if record.collected:  # put again: its TTL follows the answer's
            miss = self._pointer("ANSWERMISS", record, _iso(record.at) or "")
            puts.append(miss)
            pointers["miss_sk"] = miss[SK]
        deletes = []
        if item.get("mark_sk") and item["mark_sk"] != marks[SK]:
            deletes.append({PK: f"ANSWERMARK#{library_id}", SK: item["mark_sk"]})
        self.table.batch_write([self._item(record, **pointers), *puts], deletes)
        return record

    def _partition(self, pk: str) -> Any:
        return self.table.query(
            KeyConditionExpression=f"{PK} = :pk",
            ExpressionAttributeValues=serialize({":pk": pk}),
            ScanIndexForward=False,
            ConsistentRead=True,
        )

    def _pointed(self, kind: str, library_id: str) -> list[dict[str, Any]]:
        now = _now()
        return [p for p in self._partition(f"{kind}#{library_id}") if _live(p, now)]

    def _records(self, library_id: str, ids: list[str]) -> list[AnswerRecord]:
        found = self.table.batch_get([_key(library_id, i) for i in ids])
        now = _now()
        by_id = {i[SK]: _record(i) for i in found if _live(i, now)}
        return [by_id[i] for i in ids if i in by_id]

    def marked(
        self, library_id: str, *, limit: int, offset: int = 0
    ) -> tuple[list[AnswerRecord], int]:
        pointers = self._pointed("ANSWERMARK", library_id)
        page = [p["answer_id"] for p in islice(pointers, offset, offset + limit)]
        return self._records(library_id, page), len(pointers)

    def collected(self, library_id: str, *, limit: int) -> list[AnswerRecord]:
        pointers = self._pointed("ANSWERMISS", library_id)[:limit]
        return self._records(library_id, [p["answer_id"] for p in pointers])

    def delete_library(self, library_id: str) -> int:
        keys = []
        answers = 0
        for kind in ("ANSWER", "ANSWERMARK", "ANSWERMISS"):
            for item in self._partition(f"{kind}#{library_id}"):
                keys.append({PK: item[PK], SK: item[SK]})
                answers += kind == "ANSWER"
        self.table.batch_write((), keys)
        return answers

    def expire(self, now: datetime) -> int:
        return 0  # the table's TTL removes them
