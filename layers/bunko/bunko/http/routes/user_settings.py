"""aurak's /user-settings: chat and search preferences, with defaults and partial updates."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from bunko.errors import PermissionDeniedError
from bunko.http.deps import AccountsDep, Reader, Writer, settings_owner
from bunko.http.errors import error_responses
from bunko.services.settings import UserPreferences

router = APIRouter(prefix="/user-settings", tags=["user-settings"], responses=error_responses(401))

ModelRef = Annotated[str | None, Field(max_length=100)]
Language = Literal["zh", "en", "ja"]


class UserSettings(BaseModel):
    selectedLLMId: str | None
    selectedEmbeddingId: str | None
    selectedRerankId: str | None
    temperature: float
    maxTokens: int
    topK: int
    enableRerank: bool
    similarityThreshold: float
    enableFullTextSearch: bool
    language: Language
    # (Bunko) whether `language` is the person's choice, or the default: the web app shows
    # the browser's language until one is chosen
    languageChosen: bool = False

    @classmethod
    def of(cls, saved: UserPreferences, *, language_chosen: bool) -> UserSettings:
        return cls(
            selectedLLMId=saved.selected_llm_id,
            selectedEmbeddingId=saved.selected_embedding_id,
            selectedRerankId=saved.selected_rerank_id,
            temperature=saved.temperature,
            maxTokens=saved.max_tokens,
            topK=saved.top_k,
            enableRerank=saved.enable_rerank,
            similarityThreshold=saved.similarity_threshold,
            enableFullTextSearch=saved.enable_full_text_search,
            language=saved.language,
            languageChosen=language_chosen,
        )


class UserSettingsUpdate(BaseModel):
    """Any subset of the fields; the others keep their values. Model ids may be null."""

    model_config = ConfigDict(extra="forbid")
    selectedLLMId: ModelRef = None
    selectedEmbeddingId: ModelRef = None
    selectedRerankId: ModelRef = None
    temperature: Annotated[float | None, Field(ge=0, le=2)] = None
    maxTokens: Annotated[int | None, Field(ge=1, le=32768)] = None
    topK: Annotated[int | None, Field(ge=1, le=100)] = None
    enableRerank: bool | None = None
    similarityThreshold: Annotated[float | None, Field(ge=0, le=1)] = None
    enableFullTextSearch: bool | None = None
    language: Language | None = None


_UNSENT = object()
_NULLABLE = ("selectedLLMId", "selectedEmbeddingId", "selectedRerankId")


@router.get("", response_model=UserSettings, responses=error_responses(403))
def get_settings(principal: Reader, accounts: AccountsDep) -> UserSettings:
    owner = settings_owner(principal)
    saved = accounts.user_settings.get(owner, principal.workspace_id)
    return UserSettings.of(saved, language_chosen=accounts.user_settings.language_chosen(owner))


@router.put("", response_model=UserSettings, responses=error_responses(400, 403))
def update_settings(
    body: UserSettingsUpdate, principal: Writer, accounts: AccountsDep
) -> UserSettings:
    changes = {
        k: v
        for k, v in body.model_dump(exclude_unset=True).items()
        if v is not None or k in _NULLABLE  # null clears a model choice, ignored elsewhere
    }
    owner, workspace = settings_owner(principal), principal.workspace_id
    # The library's embedding model serves every member: its owners' choice. Sending the
    # current one back, as a whole settings form does, changes nothing and is allowed.
    chosen = changes.get("selectedEmbeddingId", _UNSENT)
    if (
        not principal.manages()
        and chosen is not _UNSENT
        and chosen != accounts.user_settings.get(owner, workspace).selected_embedding_id
    ):
        raise PermissionDeniedError("only the library's owners may change its embedding model")
    saved = accounts.user_settings.update(owner, workspace, changes)
    return UserSettings.of(saved, language_chosen=accounts.user_settings.language_chosen(owner))
