"""Sign-in with an identity provider (BUNKO_OIDC_*), wired when an issuer is configured: the
web app's sign-in (with a client id too) and MCP's access tokens from the same issuer."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from bunko.bootstrap.adapters import AccountAdapters
from bunko.config import Settings
from bunko.domain.sign_in import GroupRole
from bunko.ports import MetadataStore
from bunko.services.accounts import (
    AuthorizationServerMetadata,
    AuthService,
    GroupRoles,
    LinkedPeople,
    OidcAccessVerifier,
    OidcSignIn,
    SignInStates,
)

log = logging.getLogger(__name__)
_ANY = ("0.0.0.0", "::", "")  # noqa: S104 - wildcard binds (no Host check), not a bind


@dataclass(frozen=True)
class SignInServices:
    web: OidcSignIn | None  # None: an issuer for MCP only (no client id for the web app)
    mcp: OidcAccessVerifier
    # Bunko's own authorization-server metadata for MCP clients, in front of the issuer
    authorization_server: AuthorizationServerMetadata


def build_sign_in(
    settings: Settings, *, account: AccountAdapters, metadata: MetadataStore, auth: AuthService
) -> SignInServices | None:
    if not settings.oidc_issuer:
        return None
    if settings.oidc_audience is None and not settings.allowed_hosts and settings.host in _ANY:
        log.warning(
            "MCP access tokens are checked for the URL a request names (its Host), and any "
            "Host is served on %s: set BUNKO_OIDC_AUDIENCE or BUNKO_ALLOWED_HOSTS",
            settings.host,
        )
    from bunko.adapters.openid_provider import HttpOpenIdProvider

    secret = (
        settings.oidc_client_secret.get_secret_value()
        if settings.oidc_client_secret
        else account.oidc_client_secret
    )
    provider = HttpOpenIdProvider(
        settings.oidc_issuer, client_id=settings.oidc_client_id, client_secret=secret
    )
    stores = account.stores
    people = LinkedPeople(
        issuer=provider.issuer,
        users=stores.users,
        links=stores.links,
        metadata=metadata,
        hasher=auth.hasher,
    )
    mcp = OidcAccessVerifier(
        provider=provider,
        people=people,
        audience=settings.oidc_audience,
        audience_claim=settings.oidc_audience_claim,
    )
    metadata_doc = AuthorizationServerMetadata(provider)
    if not settings.oidc_sign_in:
        return SignInServices(web=None, mcp=mcp, authorization_server=metadata_doc)
    assert settings.oidc_client_id is not None and account.jwt_secret is not None
    roles = GroupRoles(
        store=stores.libraries,
        metadata=metadata,
        claim=settings.oidc_groups_claim,
        mapping={g: GroupRole(r.library, r.role) for g, r in settings.oidc_group_roles.items()},
    )
    web = OidcSignIn(
        provider=provider,
        client_id=settings.oidc_client_id,
        scopes=settings.oidc_scopes,
        people=people,
        roles=roles,
        tokens=auth.tokens,
        states=SignInStates(account.jwt_secret),
        provider_name=settings.oidc_provider_name or urlsplit(provider.issuer).hostname or "",
        audit=auth.audit,
    )
    return SignInServices(web=web, mcp=mcp, authorization_server=metadata_doc)
