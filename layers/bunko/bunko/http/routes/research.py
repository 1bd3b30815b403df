"""The REST twins of the research tools: POST /research-api/<noun>/<verb> with the tool's
arguments as the JSON body, answering the tool's structured result.

One door onto the same operations as MCP's tools (bunko.operations.research, DESIGN decision
9): the same strict input model, the same agent:research scope (403 without it), the same
workspace check.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError as PydanticValidationError

from bunko.errors import PermissionDeniedError
from bunko.http.deps import CurrentPrincipal, ReadsOnly, ServicesDep
from bunko.http.errors import error_responses
from bunko.operations.operation import Operation
from bunko.operations.research import RESEARCH_OPERATIONS

PREFIX = "/research-api"
router = APIRouter(prefix=PREFIX, tags=["research"])


def rest_path(name: str) -> str:
    """The path under /research-api: research_corpora_get → /corpora/get."""
    noun, verb = name.removeprefix("research_").split("_", 1)
    return f"/{noun}/{verb}"


def _handler(op: Operation):
    async def handle(request: Request, services: ServicesDep, principal: CurrentPrincipal):
        if not principal.has(op.scope):
            raise PermissionDeniedError(f"this needs the {op.scope} permission")
        raw = await request.body()
        try:
            args = op.input_model.model_validate_json(raw or b"{}")
        except PydanticValidationError as exc:
            raise RequestValidationError(exc.errors()) from exc
        run = partial(op.run, services.research, principal.workspace_id, args)
        result = await anyio.to_thread.run_sync(run)
        return result.to_structured()

    return handle


def _openapi(op: Operation) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": op.input_schema()}},
        },
        "responses": {
            "200": {
                "description": "The tool's structured result",
                "content": {"application/json": {"schema": op.output_schema()}},
            }
        },
    }


for _op in RESEARCH_OPERATIONS.values():
    router.add_api_route(
        rest_path(_op.name),
        _handler(_op),
        methods=["POST"],
        name=_op.name,
        dependencies=[ReadsOnly] if _op.read_only else [],
        summary=_op.title,
        description=_op.description,
        responses=error_responses(400, 401, 403, 404, 409),
        openapi_extra=_openapi(_op),
    )
