"""What clearing a workspace's index ids costs in DynamoDB (issue 47, point 6): a model switch
clears the workspace's index twice, inside the ingest function's 10 minutes. It read the
whole table (a strongly consistent Scan of every tenant's items); now it queries the
workspace's own partitions, so its requests and items read are the same whether the rest of
the account holds 10 documents or 10,000. Counted on moto from the client's own responses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from bunko.adapters.aws.dynamodb.table import Table
from bunko.adapters.aws.opensearch.ledger import IdLedger
from tests.aws.stand_ins import TABLE, moto_aws

MINE, OTHERS = "ws-mine", "ws-others"


class Reads:
    """DynamoDB requests by operation, and the items each read (ScannedCount for a query or
    a scan: DynamoDB charges for what it reads, whatever it returns)."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.items = 0

    def __call__(self, model, parsed, **_) -> None:
        self.requests[model.name] += 1
        if "ScannedCount" in parsed:
            self.items += parsed["ScannedCount"]
        elif "Item" in parsed:
            self.items += 1
        elif "Responses" in parsed:
            self.items += sum(len(v) for v in parsed["Responses"].values())


@contextmanager
def counted(client) -> Iterator[Reads]:
    reads = Reads()
    client.meta.events.register("after-call.dynamodb", reads)
    try:
        yield reads
    finally:
        client.meta.events.unregister("after-call.dynamodb", reads)


def clear_cost(others: int) -> tuple[Counter[str], int, list[str]]:
    """Clear MINE (5 documents of 3 chunks) with `others` documents in another workspace."""
    with moto_aws() as aws:
        ledger = IdLedger(Table(aws.dynamodb, TABLE))
        ledger.record(OTHERS, [(f"o{i}", f"other-{i}", [f"x{i}"]) for i in range(others)])
        ledger.record(MINE, [(f"c{d}-{c}", f"doc-{d}", [f"e{d}-{c}"])
                             for d in range(5) for c in range(3)])  # fmt: skip
        with counted(aws.dynamodb) as reads:
            taken = ledger.take_workspace(MINE)
        assert ledger.take_workspace(MINE) == []  # nothing left behind
        return reads.requests, reads.items, taken


@pytest.mark.slow  # 10,000 ledger rows written to moto
def test_clearing_a_workspace_costs_the_same_however_large_the_account():
    small, large = clear_cost(10), clear_cost(10_000)
    assert (
        sorted(small[2])
        == sorted(large[2])
        == sorted(f"e{d}-{c}" for d in range(5) for c in range(3))
    )
    assert small[:2] == large[:2], (small[:2], large[:2])
    requests, items, _ = large
    assert "Scan" not in requests
    assert items <= 5 * 3 + 5 + 1  # the workspace's own rows, its document list, nothing more
