"""AuditStore in the single table (infra/TABLE_DESIGN.md, "Audit trail"), append-only.

An event is one item, `AUDIT#<library>` / `<UTC time>#<event>`, written only if absent; gsi2
(`AUDIT` / `<UTC time>#<event>`) is every library's trail, for admins (not gsi1, which the
walk over every document scans). Retention is the
table's TTL attribute: DynamoDB deletes the item, and reads hide it until then. The runtime
role may not update or delete these items (infra: the table's audit deny), so `expire` has
nothing to do here.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table
from bunko.deploy_schema import GSI2, GSI2_PK, GSI2_SK, PK, SK, TTL_ATTRIBUTE
from bunko.domain.audit import AuditEvent, AuditPage, AuditQuery

ALL_LIBRARIES = "AUDIT"
NO_LIBRARY = "-"  # a refusal before any library was named (a failed sign-in, a bad token)
_FIELDS = (
    "action", "outcome", "status", "user_id", "api_key_id", "key_maker", "library_id",
    "object_kind", "object_id", "client", "door",
)  # fmt: skip


def audit_pk(library_id: str | None) -> str:
    return f"AUDIT#{library_id or NO_LIBRARY}"


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat()


def _event(item: dict[str, Any]) -> AuditEvent:
    return AuditEvent(
        id=item["event_id"],
        at=datetime.fromisoformat(item["at"]),
        **{name: item.get(name) for name in _FIELDS},
    )


class DynamoDBAuditStore:
    def __init__(self, table: Table, *, retention_days: int = 365) -> None:
        self.table = table
        self.retention = timedelta(days=retention_days) if retention_days else None

    def append(self, event: AuditEvent) -> None:
        order = f"{_iso(event.at)}#{event.id}"
        item: dict[str, Any] = {
            PK: audit_pk(event.library_id),
            SK: order,
            GSI2_PK: ALL_LIBRARIES,
            GSI2_SK: order,
            "event_id": event.id,
            "at": _iso(event.at),
            **{name: getattr(event, name) for name in _FIELDS},
        }
        if self.retention:
            item[TTL_ATTRIBUTE] = math.floor((event.at + self.retention).timestamp())
        # an append never replaces: the same key again is refused, not overwritten
        self.table.put(item, ConditionExpression="attribute_not_exists(pk)")

    def events(self, query: AuditQuery) -> AuditPage:
        names: dict[str, str] = {}
        values: dict[str, Any] = {":now": math.floor(datetime.now(UTC).timestamp())}
        if query.library_id is not None:
            key = f"{PK} = :pk"
            values[":pk"] = audit_pk(query.library_id)
            index: dict[str, Any] = {"ConsistentRead": True}
        else:
            key = f"{GSI2_PK} = :pk"
            values[":pk"] = ALL_LIBRARIES
            index = {"IndexName": GSI2}
        if query.since is not None or query.until is not None:
            names["#sk"] = SK if query.library_id is not None else GSI2_SK
        if query.since is not None and query.until is not None:
            key += " AND #sk BETWEEN :since AND :until"
        elif query.since is not None:
            key += " AND #sk >= :since"
        elif query.until is not None:
            key += " AND #sk < :until"
        if query.since is not None:
            values[":since"] = _iso(query.since)
        if query.until is not None:
            values[":until"] = _iso(query.until)
        filters = ["(attribute_not_exists(#ttl) OR #ttl > :now)"]
        names["#ttl"] = TTL_ATTRIBUTE
        if query.action is not None:
            filters.append("#action = :action")
            names["#action"] = "action"
            values[":action"] = query.action
        if query.user_id is not None:
            filters.append("(user_id = :user OR key_maker = :user)")
            values[":user"] = query.user_id
        request = {
            "KeyConditionExpression": key,
            "FilterExpression": " AND ".join(filters),
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": serialize(values),
            **index,
        }
        found = self.table.query(ScanIndexForward=False, **request)
        page = list(islice(found, query.offset, query.offset + query.limit))
        total = self.table.count(**request)
        return AuditPage(events=[_event(i) for i in page], total=total)

    def expire(self, now: datetime) -> int:
        return 0  # the table's TTL removes them
