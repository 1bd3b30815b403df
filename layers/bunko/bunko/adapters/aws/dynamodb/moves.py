"""MoveJobStore in the single table (infra/TABLE_DESIGN.md, "Moves"): one item a job,
`MOVE#<job>` / `MOVE`, its record as JSON; a running job is also on gsi2 (`MOVES` / job), so
the API counts the moves at once with one query; the table's TTL removes a job once its
archive is no longer kept (and the bucket's lifecycle rule the archive)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table
from bunko.deploy_schema import GSI2, GSI2_PK, GSI2_SK, PK, SK, TTL_ATTRIBUTE
from bunko.ports.moves import MoveRecord

RUNNING = "MOVES"
# A running job's record outlives any move (Lambda's 15 minutes, three deliveries): a job
# whose worker died in a way nothing recorded still goes, with its slot.
RUNNING_TTL = 24 * 3600


def _key(job_id: str) -> dict[str, str]:
    return {PK: f"MOVE#{job_id}", SK: "MOVE"}


class DynamoDBMoveJobs:
    def __init__(self, table: Table, *, clock: Callable[[], float] = time.time) -> None:
        self.table = table
        self.clock = clock

    def save(self, record: MoveRecord) -> None:
        expires = record.get("expires_at")
        item: dict[str, Any] = {
            **_key(record["id"]),
            "record": json.dumps(record),
            "status": record["status"],
            TTL_ATTRIBUTE: math.ceil(expires if expires else self.clock() + RUNNING_TTL),
        }
        if record["status"] == "running":
            item[GSI2_PK], item[GSI2_SK] = RUNNING, record["id"]
        self.table.put(item)

    def get(self, job_id: str) -> MoveRecord | None:
        item = self.table.get(_key(job_id))
        if item is None or int(item.get(TTL_ATTRIBUTE, math.inf)) < self.clock():
            return None  # past its TTL, not yet removed by DynamoDB
        return json.loads(item["record"])

    def running(self) -> int:
        now = math.floor(self.clock())
        return self.table.count(
            IndexName=GSI2,
            KeyConditionExpression="#pk = :pk",
            FilterExpression="#ttl >= :now",
            ExpressionAttributeNames={"#pk": GSI2_PK, "#ttl": TTL_ATTRIBUTE},
            ExpressionAttributeValues=serialize({":pk": RUNNING, ":now": now}),
        )

    def expired(self, now: float) -> list[MoveRecord]:
        return []  # the table's TTL and the bucket's lifecycle rule remove them

    def forget(self, job_id: str) -> None:
        self.table.client.delete_item(TableName=self.table.name, Key=serialize(_key(job_id)))
