"""Accounts: sign-in (passwords, or an identity provider) and tokens, API keys, users and the
libraries they share."""

from bunko.services.accounts.apikeys import (
    MAX_NAME_LENGTH,
    ApiKeyService,
    ApiKeyVerifier,
    parse_scopes,
)
from bunko.services.accounts.audit import (
    AuditTrail,
    RequestNote,
    mark_reads_only,
    note_caller,
    who,
)
from bunko.services.accounts.auth import AuthService
from bunko.services.accounts.authorization_server import AuthorizationServerMetadata
from bunko.services.accounts.bills import Bills
from bunko.services.accounts.group_roles import GroupRoles
from bunko.services.accounts.identity import LOCAL_PRINCIPAL, Identity
from bunko.services.accounts.libraries import LibraryService, LibraryView
from bunko.services.accounts.linked_people import LinkedPeople
from bunko.services.accounts.oidc_access import OidcAccessVerifier
from bunko.services.accounts.oidc_sign_in import OidcSignIn, SignInStart
from bunko.services.accounts.passwords import (
    HASH_WAIT_SECONDS,
    RETRY_AFTER_SECONDS,
    PasswordHasher,
)
from bunko.services.accounts.sign_in_state import SignInStates
from bunko.services.accounts.throttle import LoginThrottle
from bunko.services.accounts.tokens import JwtVerifier, TokenService
from bunko.services.accounts.users import UserAdminService

__all__ = [
    "HASH_WAIT_SECONDS",
    "LOCAL_PRINCIPAL",
    "MAX_NAME_LENGTH",
    "RETRY_AFTER_SECONDS",
    "ApiKeyService",
    "ApiKeyVerifier",
    "AuditTrail",
    "AuthService",
    "AuthorizationServerMetadata",
    "Bills",
    "GroupRoles",
    "Identity",
    "JwtVerifier",
    "LibraryService",
    "LibraryView",
    "LinkedPeople",
    "LoginThrottle",
    "OidcAccessVerifier",
    "OidcSignIn",
    "PasswordHasher",
    "RequestNote",
    "SignInStart",
    "SignInStates",
    "TokenService",
    "UserAdminService",
    "mark_reads_only",
    "note_caller",
    "parse_scopes",
    "who",
]
