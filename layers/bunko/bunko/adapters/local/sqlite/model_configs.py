"""SqliteModelConfigStore: model configurations per workspace (API keys stay encrypted)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.domain.accounts import ModelConfig
from bunko.errors import ConflictError, NotFoundError

_COLUMNS = (
    "id, workspace_id, name, provider, model_id, type, base_url, api_key_encrypted, "
    "supports_vision, created_at, updated_at"
)


def _config(row: sqlite3.Row) -> ModelConfig:
    values = dict(row)
    values["supports_vision"] = bool(values["supports_vision"])
    values["created_at"] = datetime.fromisoformat(values["created_at"])
    values["updated_at"] = datetime.fromisoformat(values["updated_at"])
    return ModelConfig(**values)


def _values(config: ModelConfig) -> tuple:
    return (
        config.id,
        config.workspace_id,
        config.name,
        config.provider,
        config.model_id,
        config.type,
        config.base_url,
        config.api_key_encrypted,
        int(config.supports_vision),
        config.created_at.isoformat(),
        config.updated_at.isoformat(),
    )


class SqliteModelConfigStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def add_model_config(self, config: ModelConfig) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO model_configs ({_COLUMNS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    _values(config),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"a model config named {config.name!r} already exists") from exc

    def save_model_config(self, config: ModelConfig) -> None:
        values = _values(config)
        try:
            with self.db.transaction() as conn:
                cursor = conn.execute(
                    "UPDATE model_configs SET name = ?, provider = ?, model_id = ?, type = ?, "
                    "base_url = ?, api_key_encrypted = ?, supports_vision = ?, created_at = ?, "
                    "updated_at = ? WHERE workspace_id = ? AND id = ?",
                    (*values[2:], config.workspace_id, config.id),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"a model config named {config.name!r} already exists") from exc
        if cursor.rowcount == 0:
            raise NotFoundError(f"model config {config.id} not found")

    def get_model_config(self, workspace_id: str, config_id: str) -> ModelConfig | None:
        row = (
            self.db.connect()
            .execute(
                "SELECT * FROM model_configs WHERE workspace_id = ? AND id = ?",
                (workspace_id, config_id),
            )
            .fetchone()
        )
        return _config(row) if row else None

    def list_model_configs(self, workspace_id: str) -> list[ModelConfig]:
        rows = self.db.connect().execute(
            "SELECT * FROM model_configs WHERE workspace_id = ? ORDER BY created_at, id",
            (workspace_id,),
        )
        return [_config(r) for r in rows]

    def delete_model_config(self, workspace_id: str, config_id: str) -> bool:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM model_configs WHERE workspace_id = ? AND id = ?",
                (workspace_id, config_id),
            )
        return cursor.rowcount > 0

    def delete_workspace_model_configs(self, workspace_id: str) -> int:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM model_configs WHERE workspace_id = ?", (workspace_id,)
            )
        return cursor.rowcount
