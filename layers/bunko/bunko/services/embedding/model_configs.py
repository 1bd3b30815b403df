"""ModelConfigService: the LLM / embedding / rerank endpoints a workspace has configured.

API keys are encrypted at rest with a SecretCipher and never leave this service except
through `api_key()`, for the code that calls the model; responses only say whether a key
is set.
"""

from __future__ import annotations

from typing import Any, Protocol

from bunko.domain import new_id, utcnow
from bunko.domain.accounts import MODEL_PROVIDERS, MODEL_TYPES, ModelConfig
from bunko.errors import ConflictError, NotFoundError, ValidationError
from bunko.ports import ModelConfigStore, SecretCipher
from bunko.services.bounds import check_name
from bunko.services.embedding.endpoint_guard import Resolver, check_model_endpoint, resolve

MAX_KEY_LENGTH = 4096
# What a config's vectors depend on: fixed while a workspace embeds with it.
_MODEL_FIELDS = {"provider", "model_id", "type", "base_url"}
_IN_USE = (
    "model config {!r} is a workspace's embedding model: choose another model for the "
    "workspace first (PUT /user-settings selectedEmbeddingId)"
)
_EDITABLE = ("name", "provider", "model_id", "type", "base_url", "api_key", "supports_vision")


class ModelUsage(Protocol):
    """Which models each workspace embeds with (its generations)."""

    def models(self, workspace_id: str) -> set[str]: ...
    def refresh(self, workspace_id: str, model: str) -> None: ...


def _text(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ValidationError(f"{field}: 1 to {limit} characters")
    return check_name(value.strip(), field=field)


def _choice(value: Any, field: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValidationError(f"{field}: one of {', '.join(choices)}")
    return value


class ModelConfigService:
    """`allow_private_endpoints`: whether a baseUrl may point at loopback or private
    addresses (yes on one machine, where Ollama listens on localhost; no on AWS, where they
    are the account's internal services). Link-local addresses (instance metadata) never."""

    def __init__(
        self,
        store: ModelConfigStore,
        cipher: SecretCipher,
        *,
        allow_private_endpoints: bool = True,
        resolver: Resolver = resolve,
        usage: ModelUsage | None = None,
    ) -> None:
        self.store = store
        self.cipher = cipher
        self.allow_private_endpoints = allow_private_endpoints
        self.resolver = resolver
        # A config a workspace embeds with is not deleted, nor pointed at another model,
        # while its vectors serve; None: no workspace embeds with a config.
        self.usage = usage

    def in_use(self, workspace_id: str, config_id: str) -> bool:
        return self.usage is not None and config_id in self.usage.models(workspace_id)

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
        """A partial update; `api_key` None or "" removes the key, absent leaves it, except
        that a new `base_url` or `provider` drops the stored key unless `api_key` comes with
        it: the key was given for one endpoint, and must not follow a config elsewhere."""
        config = self.get(workspace_id, config_id)
        if set(changes) & _MODEL_FIELDS and self.in_use(workspace_id, config_id):
            raise ConflictError(_IN_USE.format(config.name))
        endpoint = (config.provider, config.base_url)
        self._apply(config, changes, new=False)
        if (config.provider, config.base_url) != endpoint and "api_key" not in changes:
            config.api_key_encrypted = None
        config.updated_at = utcnow()
        self.store.save_model_config(config)
        if self.usage is not None:  # a model in use picks up its new key
            self.usage.refresh(workspace_id, config_id)
        return config

    def delete(self, workspace_id: str, config_id: str) -> None:
        config = self.get(workspace_id, config_id)
        if self.in_use(workspace_id, config_id):
            raise ConflictError(_IN_USE.format(config.name))
        if not self.store.delete_model_config(workspace_id, config_id):
            raise NotFoundError(f"model config {config_id} not found")

    def endpoint(self, config: ModelConfig) -> str | None:
        """The config's baseUrl checked again where it points now (its name may resolve
        elsewhere than when it was saved), for the code that calls the model."""
        if config.base_url is None:
            return None
        return check_model_endpoint(
            config.base_url, allow_private=self.allow_private_endpoints, resolver=self.resolver
        )

    def api_key(self, workspace_id: str, config_id: str) -> str | None:
        """The decrypted key, for the code that calls the model (never for a response)."""
        return self.key_of(self.get(workspace_id, config_id))

    def key_of(self, config: ModelConfig) -> str | None:
        """`api_key` of a config already read."""
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
            url = changes["base_url"]
            config.base_url = None
            if url is not None and (not isinstance(url, str) or url.strip()):
                config.base_url = check_model_endpoint(
                    url, allow_private=self.allow_private_endpoints, resolver=self.resolver
                )
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
