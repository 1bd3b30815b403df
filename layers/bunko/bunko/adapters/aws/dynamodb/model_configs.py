"""DynamoDBModelConfigStore: model configurations per workspace, names unique by a claim item
in the workspace's partition (API keys arrive already encrypted by the SecretCipher)."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize, ws_pk
from bunko.adapters.aws.dynamodb.table import Table, TransactionCancelled, key_only
from bunko.deploy_schema import PK, SK
from bunko.domain.accounts import ModelConfig
from bunko.errors import ConflictError, NotFoundError

_S = serialize
_FIELDS = [f.name for f in fields(ModelConfig)]
CONFIG, NAME = "MODELCFG#", "MODELNAME#"


def _key(workspace_id: str, config_id: str) -> dict[str, str]:
    return {PK: ws_pk(workspace_id), SK: f"{CONFIG}{config_id}"}


def _name_key(workspace_id: str, name: str) -> dict[str, str]:
    return {PK: ws_pk(workspace_id), SK: f"{NAME}{name}"}


def _item(config: ModelConfig) -> dict[str, Any]:
    values: dict[str, Any] = {name: getattr(config, name) for name in _FIELDS}
    values["created_at"] = config.created_at.isoformat()
    values["updated_at"] = config.updated_at.isoformat()
    return {**_key(config.workspace_id, config.id), **values}


def _config(item: dict[str, Any]) -> ModelConfig:
    values = {name: item[name] for name in _FIELDS if name in item}
    values["created_at"] = datetime.fromisoformat(values["created_at"])
    values["updated_at"] = datetime.fromisoformat(values["updated_at"])
    return ModelConfig(**values)


def _claim(config: ModelConfig) -> dict[str, Any]:
    return {
        "Put": {
            "Item": _S({**_name_key(config.workspace_id, config.name), "config_id": config.id}),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


class DynamoDBModelConfigStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def add_model_config(self, config: ModelConfig) -> None:
        ops = [
            {"Put": {"Item": _S(_item(config)), "ConditionExpression": "attribute_not_exists(pk)"}},
            _claim(config),
        ]
        try:
            self.table.transact(ops)
        except TransactionCancelled as exc:
            raise ConflictError(f"a model config named {config.name!r} already exists") from exc

    def save_model_config(self, config: ModelConfig) -> None:
        current = self.table.get(_key(config.workspace_id, config.id))
        if current is None:
            raise NotFoundError(f"model config {config.id} not found")
        ops: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": _S(_item(config)),
                    "ConditionExpression": "#n = :name",  # the name the claim change below is based on
                    "ExpressionAttributeNames": {"#n": "name"},
                    "ExpressionAttributeValues": _S({":name": current["name"]}),
                }
            }
        ]
        if current["name"] != config.name:
            ops.append({"Delete": {"Key": _S(_name_key(config.workspace_id, current["name"]))}})
            ops.append(_claim(config))
        try:
            self.table.transact(ops)
        except TransactionCancelled as exc:
            raise ConflictError(f"a model config named {config.name!r} already exists") from exc

    def get_model_config(self, workspace_id: str, config_id: str) -> ModelConfig | None:
        item = self.table.get(_key(workspace_id, config_id))
        return _config(item) if item else None

    def list_model_configs(self, workspace_id: str) -> list[ModelConfig]:
        configs = [_config(i) for i in self.table.partition(ws_pk(workspace_id), CONFIG)]
        return sorted(configs, key=lambda c: (c.created_at, c.id))

    def delete_model_config(self, workspace_id: str, config_id: str) -> bool:
        current = self.table.get(_key(workspace_id, config_id))
        if current is None:
            return False
        self.table.transact(
            [
                {"Delete": {"Key": _S(_key(workspace_id, config_id))}},
                {"Delete": {"Key": _S(_name_key(workspace_id, current["name"]))}},
            ]
        )
        return True

    def delete_workspace_model_configs(self, workspace_id: str) -> int:
        configs = list(self.table.partition(ws_pk(workspace_id), CONFIG))
        names = list(self.table.partition(ws_pk(workspace_id), NAME))
        self.table.batch_write(deletes=[key_only(i) for i in configs + names])
        return len(configs)
