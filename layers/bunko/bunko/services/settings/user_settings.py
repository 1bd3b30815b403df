"""UserSettingsService: aurak's per-user chat and search preferences.

Every field has a default, so a user who never saved anything still gets a complete
object; updates are partial. Selected model ids must name a config of the right type in
the user's workspace; one that was deleted since reads back as null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from bunko.domain.auth import Principal
from bunko.errors import ValidationError
from bunko.ports import ModelConfigStore, SettingsStore
from bunko.services.bounds import RESULTS

SCOPE = "user"
LANGUAGES = ("zh", "en", "ja")
# field → the model-config type it must point at
MODEL_FIELDS = {
    "selectedLLMId": "llm",
    "selectedEmbeddingId": "embedding",
    "selectedRerankId": "rerank",
}


class WorkspaceEmbedding(Protocol):
    def chosen(self, workspace_id: str) -> str | None: ...
    def select(self, workspace_id: str, config_id: str | None) -> Any: ...


@dataclass(frozen=True)
class _Range:
    low: float
    high: float
    integer: bool = False


RANGES = {
    "temperature": _Range(0.0, 2.0),
    "maxTokens": _Range(1, 32768, integer=True),
    "topK": _Range(1, RESULTS, integer=True),
    "similarityThreshold": _Range(0.0, 1.0),
}
FLAGS = ("enableRerank", "enableFullTextSearch")


def settings_owner(principal: Principal) -> str:
    """Whose user settings: the user's, or (API key, auth off) the workspace's."""
    return principal.user_id or f"workspace:{principal.workspace_id}"


def conversation_owner(principal: Principal) -> str:
    """Whose stored conversations: the user's; an API key's own, each key a pool of its own
    (the keys of a library sharing one let a viewer's agent read and delete the owner's
    agent's conversations); auth off: the workspace's."""
    if principal.user_id:
        return principal.user_id
    if principal.api_key_id:
        return f"key:{principal.api_key_id}"
    return f"workspace:{principal.workspace_id}"


def default_settings(*, top_k: int = 5, similarity_threshold: float = 0.3) -> dict[str, Any]:
    return {
        "selectedLLMId": None,
        "selectedEmbeddingId": None,
        "selectedRerankId": None,
        "temperature": 0.7,
        "maxTokens": 2048,
        "topK": top_k,
        "enableRerank": False,
        "similarityThreshold": similarity_threshold,
        "enableFullTextSearch": True,
        "language": "en",
    }


# The stored (and aurak's) field name → UserPreferences' attribute.
FIELDS = {
    "selectedLLMId": "selected_llm_id",
    "selectedEmbeddingId": "selected_embedding_id",
    "selectedRerankId": "selected_rerank_id",
    "temperature": "temperature",
    "maxTokens": "max_tokens",
    "topK": "top_k",
    "enableRerank": "enable_rerank",
    "similarityThreshold": "similarity_threshold",
    "enableFullTextSearch": "enable_full_text_search",
    "language": "language",
}


@dataclass(frozen=True, kw_only=True)
class UserPreferences:
    """A person's chat and search preferences, every field set (defaults filled in)."""

    selected_llm_id: str | None
    selected_embedding_id: str | None  # the workspace's model, where a switch is configured
    selected_rerank_id: str | None
    temperature: float
    max_tokens: int
    top_k: int
    enable_rerank: bool
    similarity_threshold: float
    enable_full_text_search: bool
    language: str

    @classmethod
    def of(cls, values: dict[str, Any]) -> UserPreferences:
        """From the stored fields (aurak's names), all of them present."""
        return cls(**{attr: values[field] for field, attr in FIELDS.items()})


class UserSettingsService:
    def __init__(
        self,
        store: SettingsStore,
        model_configs: ModelConfigStore,
        *,
        defaults: dict[str, Any] | None = None,
        embedding: WorkspaceEmbedding | None = None,
    ) -> None:
        self.store = store
        self.model_configs = model_configs
        self.defaults = defaults or default_settings()
        # The workspace's embedding model (ModelSwitch): selectedEmbeddingId reads and sets
        # it, for every user of the workspace (users register with a workspace of their own).
        self.embedding = embedding

    def get(self, owner: str, workspace_id: str) -> UserPreferences:
        return UserPreferences.of(self._values(owner, workspace_id))

    def _values(self, owner: str, workspace_id: str) -> dict[str, Any]:
        stored = self.store.get_settings(SCOPE, owner) or {}
        values = {**self.defaults, **{k: v for k, v in stored.items() if k in self.defaults}}
        if self.embedding is not None:
            values["selectedEmbeddingId"] = self.embedding.chosen(workspace_id)
        for field, kind in MODEL_FIELDS.items():
            if values[field] is not None and not self._is_model(workspace_id, values[field], kind):
                values[field] = None
        return values

    def update(self, owner: str, workspace_id: str, changes: dict[str, Any]) -> UserPreferences:
        """Validate and merge `changes` (any subset of the fields, by their stored names,
        which the errors name); returns the new whole."""
        unknown = set(changes) - set(self.defaults)
        if unknown:
            raise ValidationError(f"unknown fields: {', '.join(sorted(unknown))}")
        for field, value in changes.items():
            self._validate(workspace_id, field, value)
        if self.embedding is not None and "selectedEmbeddingId" in changes:
            # Validated above; a model that cannot serve here is refused before any write.
            self.embedding.select(workspace_id, changes["selectedEmbeddingId"])
        values = {**self._values(owner, workspace_id), **changes}
        # Only what was ever set is stored: a default (the language) stays a default, not a
        # choice, when another field is saved.
        stored = self.store.get_settings(SCOPE, owner) or {}
        self.store.put_settings(SCOPE, owner, {**stored, **changes})
        return UserPreferences.of(values)

    def language_chosen(self, owner: str) -> bool:
        """Whether the person saved a language (else `language` is the default, and the web
        app follows the browser's)."""
        return "language" in (self.store.get_settings(SCOPE, owner) or {})

    def delete(self, owner: str) -> None:
        self.store.delete_settings(SCOPE, owner)

    def _validate(self, workspace_id: str, field: str, value: Any) -> None:
        if field in MODEL_FIELDS:
            if value is not None and not self._is_model(workspace_id, value, MODEL_FIELDS[field]):
                raise ValidationError(f"{field}: no {MODEL_FIELDS[field]} model config {value!r}")
        elif field in RANGES:
            spec = RANGES[field]
            kinds = (int,) if spec.integer else (int, float)
            if isinstance(value, bool) or not isinstance(value, kinds):
                raise ValidationError(
                    f"{field}: must be a{'n integer' if spec.integer else ' number'}"
                )
            if not spec.low <= value <= spec.high:
                raise ValidationError(f"{field}: must be between {spec.low:g} and {spec.high:g}")
        elif field in FLAGS:
            if not isinstance(value, bool):
                raise ValidationError(f"{field}: true or false")
        elif field == "language" and value not in LANGUAGES:
            raise ValidationError(f"language: one of {', '.join(LANGUAGES)}")

    def _is_model(self, workspace_id: str, config_id: Any, kind: str) -> bool:
        if not isinstance(config_id, str):
            return False
        config = self.model_configs.get_model_config(workspace_id, config_id)
        return config is not None and config.type == kind
