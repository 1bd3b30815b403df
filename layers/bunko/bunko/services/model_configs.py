"""ModelConfigService: the LLM / embedding / rerank endpoints a workspace has configured.

API keys are encrypted at rest with a SecretCipher and never leave this service except
through `api_key()`, for the code that calls the model; responses only say whether a key
is set.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from bunko.domain import new_id, utcnow
from bunko.domain.accounts import MODEL_PROVIDERS, MODEL_TYPES, ModelConfig
from bunko.errors import NotFoundError, ValidationError
from bunko.ports import ModelConfigStore, SecretCipher
from bunko.services.text_safety import check_name

MAX_URL_LENGTH = 2048
MAX_KEY_LENGTH = 4096
_EDITABLE = ("name", "provider", "model_id", "type", "base_url", "api_key", "supports_vision")


def validate_base_url(url: str | None) -> str | None:
    """None/empty, or an absolute http(s) URL with a host (no credentials in it)."""
    if url is None or not url.strip():
        return None
    url = url.strip()
    parts = urlsplit(url)
    if len(url) > MAX_URL_LENGTH or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("baseUrl: must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValidationError("baseUrl: put credentials in apiKey, not in the URL")
    return url


def _text(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ValidationError(f"{field}: 1 to {limit} characters")
    return check_name(value.strip(), field=field)


def _choice(value: Any, field: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValidationError(f"{field}: one of {', '.join(choices)}")
    return value


class ModelConfigService:
    def __init__(self, store: ModelConfigStore, cipher: SecretCipher) -> None:
        self.store = store
        self.cipher = cipher

    def list(self, workspace_id: str) -> list[ModelConfig]:
        return self.store.list_model_configs(workspace_id)

    def get(self, workspace_id: str, config_id: str) -> ModelConfig:
        config = self.store.get_model_config(workspace_id, config_id)
        if config is None:
            raise NotFoundError(f"model config {config_id} not found")
        return config

    def create(self, workspace_id: str, **fields: Any) -> ModelConfig:
        """Fields: name, provider, model_id, type, base_url, api_key, supports_vision."""
        config = ModelConfig(
            id=new_id(), workspace_id=workspace_id, name="", provider="", model_id="", type=""
        )
        self._apply(config, {"base_url": None, "supports_vision": False, **fields}, new=True)
        self.store.add_model_config(config)
        return config

    def update(self, workspace_id: str, config_id: str, changes: dict[str, Any]) -> ModelConfig:
        """A partial update; `api_key` None or "" removes the key, absent leaves it."""
        config = self.get(workspace_id, config_id)
        self._apply(config, changes, new=False)
        config.updated_at = utcnow()
        self.store.save_model_config(config)
        return config

    def delete(self, workspace_id: str, config_id: str) -> None:
        if not self.store.delete_model_config(workspace_id, config_id):
            raise NotFoundError(f"model config {config_id} not found")

    def api_key(self, workspace_id: str, config_id: str) -> str | None:
        """The decrypted key, for the code that calls the model (never for a response)."""
        config = self.get(workspace_id, config_id)
        return self.cipher.decrypt(config.api_key_encrypted) if config.api_key_encrypted else None

    def _apply(self, config: ModelConfig, changes: dict[str, Any], *, new: bool) -> None:
        unknown = set(changes) - set(_EDITABLE)
        if unknown:
            raise ValidationError(f"unknown fields: {', '.join(sorted(unknown))}")
        if new:
            missing = [f for f in ("name", "provider", "model_id", "type") if f not in changes]
            if missing:
                raise ValidationError(f"missing fields: {', '.join(missing)}")
        if "name" in changes:
            config.name = _text(changes["name"], "name", 100)
        if "provider" in changes:
            config.provider = _choice(changes["provider"], "provider", MODEL_PROVIDERS)
        if "model_id" in changes:
            config.model_id = _text(changes["model_id"], "modelId", 200)
        if "type" in changes:
            config.type = _choice(changes["type"], "type", MODEL_TYPES)
        if "base_url" in changes:
            config.base_url = validate_base_url(changes["base_url"])
        if "supports_vision" in changes:
            if not isinstance(changes["supports_vision"], bool):
                raise ValidationError("supportsVision: true or false")
            config.supports_vision = changes["supports_vision"]
        if "api_key" in changes:
            key = changes["api_key"]
            if key is not None and (not isinstance(key, str) or len(key) > MAX_KEY_LENGTH):
                raise ValidationError(f"apiKey: at most {MAX_KEY_LENGTH} characters")
            config.api_key_encrypted = (
                self.cipher.encrypt(key.strip()) if key and key.strip() else None
            )
