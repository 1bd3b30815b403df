"""DynamoDBSettingsStore (JSON settings by scope and owner) and DynamoDBApiKeyStore (agents'
keys, stored by the hash of the secret, which is what every request looks up)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table, TransactionCancelled
from bunko.deploy_schema import GSI1, GSI1_PK, GSI1_SK, PK, SK
from bunko.domain.accounts import ApiKey
from bunko.errors import ConflictError

_S = serialize


class DynamoDBSettingsStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    @staticmethod
    def _key(scope: str, owner: str) -> dict[str, str]:
        return {PK: f"SETTINGS#{scope}", SK: owner}

    def get_settings(self, scope: str, owner: str) -> dict[str, Any] | None:
        item = self.table.get(self._key(scope, owner))
        return json.loads(item["value"]) if item else None

    def get_many_settings(self, scope: str, owners: Sequence[str]) -> dict[str, dict[str, Any]]:
        keys = [self._key(scope, owner) for owner in dict.fromkeys(owners)]
        return {item[SK]: json.loads(item["value"]) for item in self.table.batch_get(keys)}

    def put_settings(self, scope: str, owner: str, values: dict[str, Any]) -> None:
        self.table.put({**self._key(scope, owner), "value": json.dumps(values, ensure_ascii=False)})

    def delete_settings(self, scope: str, owner: str) -> None:
        self.table.client.delete_item(TableName=self.table.name, Key=_S(self._key(scope, owner)))

    def list_settings(self, scope: str) -> list[tuple[str, dict[str, Any]]]:
        found = self.table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=_S({":pk": f"SETTINGS#{scope}"}),
            ConsistentRead=True,
        )
        return [(item[SK], json.loads(item["value"])) for item in found]  # owner order

    def take_lease(self, scope: str, owner: str, holder: str, *, now: float, until: float) -> bool:
        value = {"holder": holder, "until": until}
        item = {**self._key(scope, owner), "value": json.dumps(value), "lease_holder": holder}
        try:
            self.table.client.put_item(
                TableName=self.table.name,
                Item={**_S(item), "lease_until": {"N": repr(float(until))}},
                ConditionExpression=(
                    "attribute_not_exists(pk) OR lease_until <= :now OR lease_holder = :holder"
                ),
                ExpressionAttributeValues={
                    ":now": {"N": repr(float(now))},
                    ":holder": {"S": holder},
                },
            )
        except self.table.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def release_lease(self, scope: str, owner: str, holder: str) -> None:
        # Taken over once it expired: the lease is the new holder's, left as it is.
        with contextlib.suppress(self.table.client.exceptions.ConditionalCheckFailedException):
            self.table.client.delete_item(
                TableName=self.table.name,
                Key=_S(self._key(scope, owner)),
                ConditionExpression="lease_holder = :holder",
                ExpressionAttributeValues={":holder": {"S": holder}},
            )


def _hash_key(key_hash: str) -> dict[str, str]:
    return {PK: f"KEY#{key_hash}", SK: "KEY"}


def _id_key(key_id: str) -> dict[str, str]:
    return {PK: f"KEYID#{key_id}", SK: "KEYID"}


def _api_key(item: dict[str, Any]) -> ApiKey:
    return ApiKey(
        id=item["id"],
        workspace_id=item["workspace_id"],
        name=item.get("name", ""),
        scopes=frozenset(item["scopes"].split()),
        key_hash=item["key_hash"],
        prefix=item["prefix"],
        created_at=datetime.fromisoformat(item["created_at"]),
        revoked_at=datetime.fromisoformat(item["revoked_at"]) if item.get("revoked_at") else None,
        created_by=item.get("created_by"),
    )


class DynamoDBApiKeyStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def add(self, key: ApiKey) -> None:
        created = key.created_at.isoformat()
        item = {
            **_hash_key(key.key_hash),
            "id": key.id,
            "workspace_id": key.workspace_id,
            "name": key.name,
            "scopes": " ".join(sorted(key.scopes)),
            "key_hash": key.key_hash,
            "prefix": key.prefix,
            "created_at": created,
            "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
            "created_by": key.created_by,
            GSI1_PK: "APIKEYS",
            GSI1_SK: f"{created}#{key.id}",
        }
        try:
            self.table.transact(
                [
                    {"Put": {"Item": _S(item), "ConditionExpression": "attribute_not_exists(pk)"}},
                    {
                        "Put": {
                            "Item": _S({**_id_key(key.id), "key_hash": key.key_hash}),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                ]
            )
        except TransactionCancelled as exc:
            raise ConflictError(f"API key {key.id} already exists") from exc

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        item = self.table.get(_hash_key(key_hash))
        return _api_key(item) if item else None

    def get(self, key_id: str) -> ApiKey | None:
        pointer = self.table.get(_id_key(key_id))
        return self.find_by_hash(pointer["key_hash"]) if pointer else None

    def list_keys(self, workspace_id: str | None = None) -> list[ApiKey]:
        found = self.table.query(
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues=_S({":pk": "APIKEYS"}),
        )
        keys = [_api_key(item) for item in found]
        return [k for k in keys if workspace_id is None or k.workspace_id == workspace_id]

    def revoke(self, key_id: str, when: datetime) -> bool:
        pointer = self.table.get(_id_key(key_id))
        if pointer is None:
            return False
        try:
            self.table.client.update_item(
                TableName=self.table.name,
                Key=_S(_hash_key(pointer["key_hash"])),
                UpdateExpression="SET revoked_at = :when",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(revoked_at)",
                ExpressionAttributeValues=_S({":when": when.isoformat()}),
            )
        except self.table.client.exceptions.ConditionalCheckFailedException:
            return False
        return True
