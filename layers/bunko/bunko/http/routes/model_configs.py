"""aurak's /model-configs: the workspace's LLM, embedding and rerank endpoints.

API keys go in and never come out: responses carry `hasApiKey` instead. Anyone in a library
reads its configs; only its owners (anyone, in their own library) create, change or delete
them, since every member's questions go where they point.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from bunko.domain.accounts import ModelConfig
from bunko.http.deps import AccountsDep, Owner, Reader
from bunko.http.errors import error_responses
from bunko.operations.aurak import Deleted

router = APIRouter(prefix="/model-configs", tags=["model-configs"], responses=error_responses(401))

Provider = Literal["openai", "gemini", "bedrock", "local"]
ModelType = Literal["llm", "embedding", "rerank"]
Name = Annotated[str, Field(min_length=1, max_length=100)]
ModelId = Annotated[str, Field(min_length=1, max_length=200)]
Url = Annotated[str | None, Field(max_length=2048)]
Key = Annotated[str | None, Field(max_length=4096)]
# request field → service field
_FIELDS = {
    "name": "name",
    "provider": "provider",
    "modelId": "model_id",
    "type": "type",
    "baseUrl": "base_url",
    "apiKey": "api_key",
    "supportsVision": "supports_vision",
}


class ModelConfigCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name
    provider: Provider
    modelId: ModelId
    type: ModelType
    baseUrl: Url = None
    apiKey: Key = None
    supportsVision: bool = False


class ModelConfigUpdate(BaseModel):
    """Any subset; `apiKey: null` or `""` removes the key, leaving it out keeps it, except
    that a new `baseUrl` or `provider` drops the stored key unless this request sends one."""

    model_config = ConfigDict(extra="forbid")
    name: Name | None = None
    provider: Provider | None = None
    modelId: ModelId | None = None
    type: ModelType | None = None
    baseUrl: Url = None
    apiKey: Key = None
    supportsVision: bool | None = None


class ModelConfigPublic(BaseModel):
    id: str
    name: str
    provider: str
    modelId: str
    baseUrl: str | None
    type: str
    supportsVision: bool
    hasApiKey: bool
    createdAt: datetime
    updatedAt: datetime

    @classmethod
    def of(cls, c: ModelConfig) -> ModelConfigPublic:
        return cls(
            id=c.id,
            name=c.name,
            provider=c.provider,
            modelId=c.model_id,
            baseUrl=c.base_url,
            type=c.type,
            supportsVision=c.supports_vision,
            hasApiKey=c.api_key_encrypted is not None,
            createdAt=c.created_at,
            updatedAt=c.updated_at,
        )


def _changes(body: BaseModel) -> dict:
    values = body.model_dump(exclude_unset=True)
    # null for a required field means "not given" in a partial update
    return {_FIELDS[k]: v for k, v in values.items() if v is not None or k in ("baseUrl", "apiKey")}


@router.get("", response_model=list[ModelConfigPublic], responses=error_responses(403))
def list_model_configs(principal: Reader, accounts: AccountsDep) -> list[ModelConfigPublic]:
    return [ModelConfigPublic.of(c) for c in accounts.model_configs.list(principal.workspace_id)]


@router.post(
    "",
    status_code=201,
    response_model=ModelConfigPublic,
    responses=error_responses(400, 403, 409),
)
def create_model_config(
    body: ModelConfigCreate, principal: Owner, accounts: AccountsDep
) -> ModelConfigPublic:
    config = accounts.model_configs.create(principal.workspace_id, **_changes(body))
    return ModelConfigPublic.of(config)


@router.get("/{config_id}", response_model=ModelConfigPublic, responses=error_responses(403, 404))
def get_model_config(config_id: str, principal: Reader, accounts: AccountsDep) -> ModelConfigPublic:
    return ModelConfigPublic.of(accounts.model_configs.get(principal.workspace_id, config_id))


@router.put(
    "/{config_id}",
    response_model=ModelConfigPublic,
    responses=error_responses(400, 403, 404, 409),
)
def update_model_config(
    config_id: str, body: ModelConfigUpdate, principal: Owner, accounts: AccountsDep
) -> ModelConfigPublic:
    config = accounts.model_configs.update(principal.workspace_id, config_id, _changes(body))
    return ModelConfigPublic.of(config)


@router.delete("/{config_id}", response_model=Deleted, responses=error_responses(403, 404))
def delete_model_config(config_id: str, principal: Owner, accounts: AccountsDep) -> Deleted:
    accounts.model_configs.delete(principal.workspace_id, config_id)
    return Deleted(message="Model config deleted", id=config_id)
