"""Domain exceptions. HTTP and MCP map them to responses in one place each."""

from __future__ import annotations


class BunkoError(Exception):
    """Base class: a message a person (or an agent) can act on."""


class NotFoundError(BunkoError):
    pass


class ConflictError(BunkoError):
    pass


class ValidationError(BunkoError):
    pass


class UnsupportedMediaError(BunkoError):
    pass


class PayloadTooLargeError(BunkoError):
    pass


class ParseError(BunkoError):
    """A file could not be read as its type says (corrupt, encrypted, empty)."""


class PermissionDeniedError(BunkoError):
    pass


class AuthenticationError(BunkoError):
    pass
