"""/embedding-model: which embedding model serves the caller's workspace, and how far a change
of model is (DESIGN decision 6). aurak's `PUT /user-settings` `selectedEmbeddingId` chooses
it; `PUT /embedding-model` is the same choice by name, for clients without user settings."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from bunko.errors import ValidationError
from bunko.http.deps import AccountsDep, Owner, Reader
from bunko.http.errors import error_responses
from bunko.services.embedding import ModelStatus, ModelSwitch

router = APIRouter(
    prefix="/embedding-model", tags=["embedding-model"], responses=error_responses(401)
)


class ModelRef(BaseModel):
    modelConfigId: str | None  # None: the server's default model
    name: str | None
    modelId: str | None = None


class Building(ModelRef):
    chunksDone: int
    chunksTotal: int
    error: str | None


class Refined(BaseModel):
    """The stronger model refining a default-model workspace (BUNKO_REFINE_EMBEDDER)."""

    name: str | None
    chunksRefined: int
    chunksTotal: int
    serving: bool  # it answers the workspace's searches now


class EmbeddingModelStatus(BaseModel):
    serving: ModelRef
    building: Building | None
    refined: Refined | None = None

    @classmethod
    def of(cls, status: ModelStatus) -> EmbeddingModelStatus:
        """The switch's typed status in aurak's camelCase."""
        serving, building, refined = status.serving, status.building, status.refined
        return cls(
            serving=ModelRef(
                modelConfigId=serving.config_id, name=serving.name, modelId=serving.model_id
            ),
            building=None
            if building is None
            else Building(
                modelConfigId=building.config_id,
                name=building.name,
                modelId=building.model_id,
                chunksDone=building.chunks_done,
                chunksTotal=building.chunks_total,
                error=building.error,
            ),
            refined=None
            if refined is None
            else Refined(
                name=refined.name,
                chunksRefined=refined.chunks_refined,
                chunksTotal=refined.chunks_total,
                serving=refined.serving,
            ),
        )


class EmbeddingModelChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    modelConfigId: Annotated[str | None, Field(max_length=100)]


def _switch(accounts: AccountsDep) -> ModelSwitch:
    if accounts.model_switch is None:
        raise ValidationError("embedding models are not configurable on this deployment")
    return accounts.model_switch


@router.get("", response_model=EmbeddingModelStatus, responses=error_responses(403))
def get_model(principal: Reader, accounts: AccountsDep) -> EmbeddingModelStatus:
    return EmbeddingModelStatus.of(_switch(accounts).status(principal.workspace_id))


@router.put("", response_model=EmbeddingModelStatus, responses=error_responses(400, 403, 404))
def choose_model(
    body: EmbeddingModelChoice, principal: Owner, accounts: AccountsDep
) -> EmbeddingModelStatus:
    status = _switch(accounts).select(principal.workspace_id, body.modelConfigId)
    return EmbeddingModelStatus.of(status)
