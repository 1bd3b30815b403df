"""Every 4xx/5xx body is aurak's `{statusCode, message, error}`; domain errors map here."""

from __future__ import annotations

import logging
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from bunko import errors

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
}


def error_body(status: int, message: str | list[str]) -> dict:
    return {"statusCode": status, "message": message, "error": HTTPStatus(status).phrase}


def error_response(status: int, message: str | list[str], headers: dict | None = None) -> JSONResponse:
    return JSONResponse(error_body(status, message), status_code=status, headers=headers)


def _status_for(exc: errors.BunkoError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500


def _field(loc: tuple) -> str:
    return ".".join(str(p) for p in loc if p not in ("body", "query", "path", "header", "form"))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.BunkoError)
    async def _domain(_: Request, exc: errors.BunkoError) -> JSONResponse:
        status = _status_for(exc)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return error_response(status, str(exc) or HTTPStatus(status).phrase, headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        messages = [f"{_field(e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()]
        return error_response(400, messages)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return error_response(500, "internal server error")
