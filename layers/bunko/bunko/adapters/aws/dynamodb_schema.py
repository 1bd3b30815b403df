"""The table's key schema, in one place: the CDK stack and the tests both build it from here."""

from __future__ import annotations

from typing import Any

from bunko.adapters.aws.dynamodb_items import GSI1, GSI1_PK, GSI1_SK, GSI2, GSI2_PK, GSI2_SK, PK, SK

# (index name, partition key, sort key); all string keys, projection ALL.
GLOBAL_INDEXES: list[tuple[str, str, str]] = [(GSI1, GSI1_PK, GSI1_SK), (GSI2, GSI2_PK, GSI2_SK)]


def create_table_kwargs(table_name: str) -> dict[str, Any]:
    """CreateTable arguments (on-demand), for tests and for a hand-made table."""
    attributes = {PK, SK} | {name for _, pk, sk in GLOBAL_INDEXES for name in (pk, sk)}
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": a, "AttributeType": "S"} for a in sorted(attributes)
        ],
        "KeySchema": [
            {"AttributeName": PK, "KeyType": "HASH"},
            {"AttributeName": SK, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": name,
                "KeySchema": [
                    {"AttributeName": pk, "KeyType": "HASH"},
                    {"AttributeName": sk, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
            for name, pk, sk in GLOBAL_INDEXES
        ],
    }
