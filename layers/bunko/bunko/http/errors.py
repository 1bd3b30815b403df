"""What /openapi.json says about errors. The bodies themselves, and the mapping of domain
errors to them, are every door's (bunko.asgi.errors)."""

from __future__ import annotations

from http import HTTPStatus

from fastapi import FastAPI

from bunko.asgi.errors import OPENAI_DOOR, ErrorBody, OpenAIErrorBody


def error_responses(*statuses: int) -> dict[int | str, dict]:
    """OpenAPI `responses=` entries for these statuses, all with the ErrorBody schema."""
    return {
        status: {"model": ErrorBody, "description": HTTPStatus(status).phrase}
        for status in statuses
    }


LIBRARY_HEADER = "X-Bunko-Library"  # http/deps names the library of a request with it
# POST /upload's answer for the same bytes under the same name: the file already held them
EXISTING_HEADER = "X-Bunko-Existing"


def document_errors(app: FastAPI) -> None:
    """Make /openapi.json tell the truth about errors: validation failures are 400 with
    ErrorBody (FastAPI documents an unused 422), and every error has the ErrorBody shape,
    OpenAIErrorBody on the `/v1/` routes."""
    build = app.openapi

    def openapi() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        schema = build()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components.setdefault("ErrorBody", ErrorBody.model_json_schema())
        openai = OpenAIErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, definition in openai.pop("$defs", {}).items():
            components.setdefault(name, definition)
        components.setdefault("OpenAIErrorBody", openai)
        for route, path in schema.get("paths", {}).items():
            body = "OpenAIErrorBody" if route.startswith(OPENAI_DOOR) else "ErrorBody"
            ref = {"$ref": f"#/components/schemas/{body}"}
            for operation in path.values():
                responses = operation.get("responses", {})
                if responses.pop("422", None) is not None:
                    responses.setdefault("400", {"description": "Bad Request"})
                if any(p.get("name") == LIBRARY_HEADER for p in operation.get("parameters", [])):
                    # a library the caller is not in (http/deps): any route may answer it
                    responses.setdefault("404", {"description": "Not Found"})
                # a Host header this server does not answer to (asgi/hardening.TrustedHosts)
                responses.setdefault("421", {"description": "Misdirected Request"})
                for status, response in responses.items():
                    if status[0] in "45":
                        response["content"] = {"application/json": {"schema": ref}}
        for name in ("HTTPValidationError", "ValidationError"):
            components.pop(name, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi
