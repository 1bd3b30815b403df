"""Domain exceptions. HTTP and MCP map them to responses in one place each."""

from __future__ import annotations


class BunkoError(Exception):
    """Base class: a message a person (or an agent) can act on."""


class NotFoundError(BunkoError):
    pass


class ConflictError(BunkoError):
    pass


class StaleError(ConflictError):
    """A conditional write lost: the record changed (a newer revision) since it was read."""


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


class ServiceUnavailableError(BunkoError):
    """A dependency is missing or busy (LibreOffice not installed, a conversion timed out)."""


class UpstreamError(BunkoError):
    """A model provider Bunko called failed (bad key, unknown model, rate limit...)."""


class TooManyRequestsError(BunkoError):
    """Refused for a while (login lockout); `retry_after` is in seconds."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
