"""What code costs in DynamoDB, counted from every client's calls (the items read, as
DynamoDB bills them), and a library written straight to the table as items, as one from
before the counters and the name catalog."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from botocore.client import BaseClient

from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.table import Table
from bunko.domain import Document, utcnow
from tests.aws.stand_ins import TABLE


def item_bytes(item: dict) -> int:
    """An item's size as DynamoDB bills it: each attribute's name plus its value (strings by
    their UTF-8 bytes, numbers one byte per two digits plus one, lists and maps 3 bytes plus
    one per element)."""
    return sum(len(name.encode()) + _value_bytes(value) for name, value in item.items())


def _value_bytes(value: dict) -> int:
    ((kind, v),) = value.items()
    if kind == "S":
        return len(v.encode())
    if kind == "N":
        return (len(v.lstrip("-").replace(".", "").strip("0")) + 1) // 2 + 1
    if kind == "B":
        return len(v)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + _value_bytes(e) for e in v)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_bytes(e) for k, e in v.items())
    return sum(len(e.encode()) if isinstance(e, str) else len(e) for e in v)  # sets


class Reads:
    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.items = 0
        self.bytes = 0  # of the items returned (what a read without a projection is billed)

    def record(self, operation: str, parsed: dict) -> None:
        self.requests[operation] += 1
        if "ScannedCount" in parsed:
            self.items += parsed["ScannedCount"]
        elif "Item" in parsed:
            self.items += 1
        elif "Responses" in parsed and operation == "BatchGetItem":
            self.items += sum(len(v) for v in parsed["Responses"].values())
        found = parsed.get("Items") or ([parsed["Item"]] if "Item" in parsed else [])
        if operation == "BatchGetItem":
            found = [i for v in parsed.get("Responses", {}).values() for i in v]
        self.bytes += sum(item_bytes(i) for i in found)

    @property
    def seen(self) -> tuple[dict[str, int], int]:
        return dict(self.requests), self.items


@contextmanager
def counted(monkeypatch) -> Iterator[Reads]:
    """Every DynamoDB call made by any client (the function builds its own)."""
    reads = Reads()
    original = BaseClient._make_api_call

    def recording(self, operation, params):
        parsed = original(self, operation, params)
        if self.meta.service_model.service_name == "dynamodb":
            reads.record(operation, parsed)
        return parsed

    with monkeypatch.context() as patch:
        patch.setattr(BaseClient, "_make_api_call", recording)
        yield reads


def fill(dynamodb, workspace_id: str, n: int) -> None:
    """`n` documents of 100 bytes written as items, without the stores' transactions."""
    base = utcnow() - timedelta(days=1)
    docs = [
        Document(id=f"doc-{i:05d}", workspace_id=workspace_id, path=f"bulk/{i:05d}.md",
                 name=f"{i:05d}.md", mime="text/markdown", size=100,
                 created_at=base + timedelta(milliseconds=i), updated_at=base)
        for i in range(n)
    ]  # fmt: skip
    Table(dynamodb, TABLE).batch_write(
        puts=[
            {
                **items.doc_key(workspace_id, d.id),
                **items.document_attributes(d),
                "ver": 1,
                "chunks_stored": 0,
            }
            for d in docs
        ]
    )
