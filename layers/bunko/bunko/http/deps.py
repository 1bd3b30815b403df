"""Dependency aliases for route handlers: services, the caller, and what the caller may do.

Any app that includes these routers (the REST app on 3000, the MCP app on 3001) must set
`app.state.services` to the Services built by `bunko.bootstrap.build_services`.
"""

from __future__ import annotations

from typing import Annotated, TypeVar
from urllib.parse import unquote

from fastapi import Depends, Header, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from bunko.bootstrap import AccountServices, Services
from bunko.domain.auth import SCOPE_ADMIN, SCOPE_READ, SCOPE_WRITE, Principal
from bunko.errors import PermissionDeniedError, ServiceUnavailableError
from bunko.http.errors import LIBRARY_HEADER
from bunko.services.accounts import mark_reads_only, note_caller
from bunko.services.conversion import ConversionService, VisionAdvisor
from bunko.services.ingest import KnowledgeBaseService
from bunko.services.settings import conversation_owner, settings_owner

__all__ = ["conversation_owner", "settings_owner"]  # re-exported for the routers

bearer = HTTPBearer(
    auto_error=False,
    description="An access token from POST /auth/login, or an API key.",
)


def get_services(request: Request) -> Services:
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(get_services)]


T = TypeVar("T")


def with_accounts(service: T | None) -> T:
    """A service that exists only where user accounts do (503 elsewhere)."""
    if service is None:
        raise ServiceUnavailableError("user accounts are not available on this backend yet")
    return service


def get_accounts(services: ServicesDep) -> AccountServices:
    return with_accounts(services.accounts)


def get_knowledge_base(services: ServicesDep) -> KnowledgeBaseService:
    return with_accounts(services.knowledge_base)


def get_vision(services: ServicesDep) -> VisionAdvisor:
    return with_accounts(services.vision)


def get_conversions(services: ServicesDep) -> ConversionService:
    return with_accounts(services.conversions)


AccountsDep = Annotated[AccountServices, Depends(get_accounts)]
KnowledgeBaseDep = Annotated[KnowledgeBaseService, Depends(get_knowledge_base)]
VisionDep = Annotated[VisionAdvisor, Depends(get_vision)]
ConversionsDep = Annotated[ConversionService, Depends(get_conversions)]


def get_principal(
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    library: Annotated[
        str | None,
        Header(
            alias=LIBRARY_HEADER,
            max_length=300,
            description="The library to work in: its id, or its name (percent-encoded when "
            "not ASCII); left out: the caller's own. 404 for one the caller is not a member of.",
        ),
    ] = None,
) -> Principal:
    """The caller, in the library the request names; 401 (AuthenticationError) for a
    missing, bad or expired token."""
    principal = services.identity.authenticate(credentials.credentials if credentials else None)
    if library:
        # a refusal to enter is recorded against the library asked for (docs/audit.md)
        note_caller(principal, library_asked=unquote(library))
        principal = get_accounts(services).libraries.enter(principal, unquote(library))
    note_caller(principal)
    return principal


CurrentPrincipal = Annotated[Principal, Depends(get_principal)]


async def reads_only() -> None:
    """A route's marker (`dependencies=[ReadsOnly]`): it changes nothing, whatever its method,
    so the audit trail records it only when refused (bunko.asgi.audit)."""
    mark_reads_only()


ReadsOnly = Depends(reads_only)


def require(scope: str):
    """A dependency: the caller, who must hold `scope` (403 otherwise)."""

    def check(principal: CurrentPrincipal) -> Principal:
        if not principal.has(scope):
            raise PermissionDeniedError(f"this needs the {scope} permission")
        return principal

    return check


def require_owner(principal: Annotated[Principal, Depends(require(SCOPE_WRITE))]) -> Principal:
    """The caller, who must write and, in a shared library, be its owner (403 otherwise):
    what changes the library for everyone in it (its models)."""
    if not principal.manages():
        raise PermissionDeniedError("only the library's owners may do this")
    return principal


Reader = Annotated[Principal, Depends(require(SCOPE_READ))]
Writer = Annotated[Principal, Depends(require(SCOPE_WRITE))]
Owner = Annotated[Principal, Depends(require_owner)]
Admin = Annotated[Principal, Depends(require(SCOPE_ADMIN))]
