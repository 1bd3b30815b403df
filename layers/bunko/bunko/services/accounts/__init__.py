"""Accounts: sign-in, passwords and tokens, API keys, users and the libraries they share."""

from bunko.services.accounts.apikeys import (
    MAX_NAME_LENGTH,
    ApiKeyService,
    ApiKeyVerifier,
    parse_scopes,
)
from bunko.services.accounts.auth import AuthService
from bunko.services.accounts.identity import LOCAL_PRINCIPAL, Identity
from bunko.services.accounts.libraries import LibraryService, LibraryView
from bunko.services.accounts.passwords import PasswordHasher
from bunko.services.accounts.throttle import LoginThrottle
from bunko.services.accounts.tokens import JwtVerifier, TokenService
from bunko.services.accounts.users import UserAdminService

__all__ = [
    "LOCAL_PRINCIPAL",
    "MAX_NAME_LENGTH",
    "ApiKeyService",
    "ApiKeyVerifier",
    "AuthService",
    "Identity",
    "JwtVerifier",
    "LibraryService",
    "LibraryView",
    "LoginThrottle",
    "PasswordHasher",
    "TokenService",
    "UserAdminService",
    "parse_scopes",
]
