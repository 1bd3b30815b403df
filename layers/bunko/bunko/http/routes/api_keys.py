"""/api-keys: the signed-in user's API keys for agents (list, create → the key once, revoke).

This is how a key is made where `bunko apikey` cannot reach (AWS). A key works in the
caller's workspace only, records its maker, and at every use holds no more than its maker's
rights there at that moment (services/accounts/apikeys.py). An owner lists and revokes every
key of the library; any other member their own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from bunko.domain.accounts import OPERATOR, ApiKey
from bunko.domain.auth import ALL_SCOPES, SCOPE_ADMIN, Principal
from bunko.errors import PermissionDeniedError, ServiceUnavailableError
from bunko.http.deps import Reader, ServicesDep
from bunko.http.errors import error_responses
from bunko.services.accounts import MAX_NAME_LENGTH, ApiKeyService, parse_scopes

router = APIRouter(prefix="/api-keys", tags=["api-keys"], responses=error_responses(401, 403))


class ApiKeyCreate(BaseModel):
    name: Annotated[str, Field(max_length=MAX_NAME_LENGTH)] = ""
    scopes: Annotated[list[str], Field(min_length=1, max_length=len(ALL_SCOPES))]


class ApiKeyPublic(BaseModel):
    id: str
    name: str
    prefix: str  # the key's first characters, to recognise it
    scopes: list[str]
    createdAt: datetime
    revokedAt: datetime | None

    @classmethod
    def of(cls, key: ApiKey) -> ApiKeyPublic:
        return cls(
            id=key.id,
            name=key.name,
            prefix=key.prefix,
            scopes=sorted(key.scopes),
            createdAt=key.created_at,
            revokedAt=key.revoked_at,
        )


class ApiKeyCreated(ApiKeyPublic):
    key: str  # the secret: shown in this response only, never stored


def _keys(services: ServicesDep) -> ApiKeyService:
    if services.apikeys is None:
        raise ServiceUnavailableError("API keys are not available on this backend")
    return services.apikeys


KeysDep = Annotated[ApiKeyService, Depends(_keys)]


def _person(principal: Principal) -> Principal:
    # A key must not mint keys: an agent's leaked key would otherwise outlive its revocation.
    if principal.api_key_id is not None:
        raise PermissionDeniedError("API keys are managed by a signed-in user, not by a key")
    return principal


@router.get("", response_model=list[ApiKeyPublic])
def list_api_keys(principal: Reader, keys: KeysDep) -> list[ApiKeyPublic]:
    """The library's keys the caller manages (an owner: all; a member: their own), oldest
    first, revoked ones included (with `revokedAt`)."""
    _person(principal)
    return [ApiKeyPublic.of(k) for k in keys.keys_for(principal)]


@router.post("", status_code=201, response_model=ApiKeyCreated, responses=error_responses(400))
def create_api_key(body: ApiKeyCreate, principal: Reader, keys: KeysDep) -> ApiKeyCreated:
    """A new key for the caller's library (the one the request names, else their own),
    with at most the caller's rights there (a viewer's: kb:read); `key` is shown in this
    response only."""
    _person(principal)
    scopes = parse_scopes(body.scopes)
    if principal.role is not None and SCOPE_ADMIN in scopes:
        raise PermissionDeniedError("a key made in a shared library cannot carry admin")
    missing = sorted(s for s in scopes if not principal.has(s))
    if missing:
        raise PermissionDeniedError(f"you cannot give a key scopes you lack: {', '.join(missing)}")
    record, secret = keys.create(
        workspace_id=principal.workspace_id,
        scopes=scopes,
        name=body.name.strip(),
        created_by=principal.user_id or OPERATOR,  # auth off: the machine's operator
    )
    return ApiKeyCreated(**ApiKeyPublic.of(record).model_dump(), key=secret)


@router.delete("/{key_id}", response_model=ApiKeyPublic, responses=error_responses(404))
def revoke_api_key(key_id: str, principal: Reader, keys: KeysDep) -> ApiKeyPublic:
    """Revoke a key the caller manages (an owner: any of the library's; a member: their
    own; any other answers 404): it stops working at once."""
    _person(principal)
    return ApiKeyPublic.of(keys.revoke_for(principal, key_id))
