"""Every 4xx/5xx body is aurak's `{statusCode, message, error}`; domain errors map here, for
every app and middleware of every door (REST's /openapi.json documents them: http/errors.py).

Except under the OpenAI-compatible door (`/v1/…`), whose clients are OpenAI's SDKs: there an
error is OpenAI's `{"error": {"message", "type", "param", "code"}}`, so the SDK raises with
the message (it shows only "Error code: 404" for any other shape)."""

from __future__ import annotations

import logging
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from bunko import errors
from bunko.errors import ServiceUnavailableError, TooManyRequestsError

log = logging.getLogger(__name__)

STATUS_BY_ERROR: dict[type[errors.BunkoError], int] = {
    errors.ValidationError: 400,
    errors.ParseError: 400,
    errors.AuthenticationError: 401,
    errors.PermissionDeniedError: 403,
    errors.NotFoundError: 404,
    errors.ConflictError: 409,
    errors.PayloadTooLargeError: 413,
    errors.UnsupportedMediaError: 415,
    TooManyRequestsError: 429,
    ServiceUnavailableError: 503,
    errors.UpstreamError: 502,
}


class ErrorBody(BaseModel):
    """aurak's error body, for every 4xx and 5xx."""

    statusCode: int
    message: str | list[str]
    error: str


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class OpenAIErrorBody(BaseModel):
    """OpenAI's error body, for every 4xx and 5xx of the `/v1/` routes."""

    error: OpenAIErrorDetail


def error_body(status: int, message: str | list[str]) -> dict:
    return {"statusCode": status, "message": message, "error": HTTPStatus(status).phrase}


# OpenAI's error `type` and `code` by status (its API reference's error codes)
OPENAI_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "not_found"),
    409: ("invalid_request_error", "conflict"),
    413: ("invalid_request_error", "request_too_large"),
    415: ("invalid_request_error", "unsupported_media_type"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}
OPENAI_DOOR = "/v1/"


def openai_error_body(status: int, message: str | list[str]) -> dict:
    text = "; ".join(message) if isinstance(message, list) else message
    kind, code = OPENAI_ERRORS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}


def is_openai_door(scope: Scope | None) -> bool:
    """A request to the OpenAI-compatible routes (its path below any stage or base path)."""
    if not scope or scope.get("type") != "http":
        return False
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.startswith(OPENAI_DOOR)


def error_response(
    status: int,
    message: str | list[str],
    headers: dict | None = None,
    *,
    scope: Scope | None = None,
) -> JSONResponse:
    """The error in the shape the caller's door speaks (`scope`: the request's)."""
    body = (
        openai_error_body(status, message) if is_openai_door(scope) else error_body(status, message)
    )
    return JSONResponse(body, status_code=status, headers=headers)


def status_for(exc: errors.BunkoError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500


def _field(loc: tuple) -> str:
    return ".".join(str(p) for p in loc if p not in ("body", "query", "path", "header", "form"))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.BunkoError)
    async def _domain(request: Request, exc: errors.BunkoError) -> JSONResponse:
        status = status_for(exc)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        if isinstance(exc, TooManyRequestsError):
            headers = {"Retry-After": str(exc.retry_after)}
        message = str(exc) or HTTPStatus(status).phrase
        return error_response(status, message, headers, scope=request.scope)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        messages = [f"{_field(e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()]
        return error_response(400, messages, scope=request.scope)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = getattr(exc, "headers", None)
        return error_response(exc.status_code, str(exc.detail), headers, scope=request.scope)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return error_response(500, "internal server error", scope=request.scope)
