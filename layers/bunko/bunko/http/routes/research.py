"""The REST twins of the research tools: POST /research-api/<noun>/<verb> with the tool's
arguments as the JSON body, answering the tool's structured result.

One door onto the same tool functions as MCP (DESIGN decision 9): the same strict input
model, the same agent:research scope (403 without it), the same workspace check.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError as PydanticValidationError

from bunko.errors import PermissionDeniedError
from bunko.http.deps import CurrentPrincipal, ServicesDep
from bunko.http.errors import error_responses
from bunko.mcp import tools_research  # noqa: F401  (registers the research tools)
from bunko.mcp.registry import TOOLS, ToolContext, ToolSpec

PREFIX = "/research-api"
router = APIRouter(prefix=PREFIX, tags=["research"])

# tool name → path under /research-api (research_corpora_get → /corpora/get)
RESEARCH_TOOLS = [name for name in TOOLS if name.startswith("research_")]


def rest_path(tool_name: str) -> str:
    noun, verb = tool_name.removeprefix("research_").split("_", 1)
    return f"/{noun}/{verb}"


def _handler(spec: ToolSpec):
    async def handle(request: Request, services: ServicesDep, principal: CurrentPrincipal):
        if not principal.has(spec.scope):
            raise PermissionDeniedError(f"this needs the {spec.scope} permission")
        raw = await request.body()
        try:
            args = spec.input_model.model_validate_json(raw or b"{}")
        except PydanticValidationError as exc:
            raise RequestValidationError(exc.errors()) from exc
        context = ToolContext(services=services, principal=principal, transport="http")
        result = await anyio.to_thread.run_sync(partial(spec.run, context, args))
        return result.to_structured()

    return handle


def _openapi(spec: ToolSpec) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": spec.input_schema()}},
        },
        "responses": {
            "200": {
                "description": "The tool's structured result",
                "content": {"application/json": {"schema": spec.output_schema()}},
            }
        },
    }


for _name in RESEARCH_TOOLS:
    _spec = TOOLS[_name]
    router.add_api_route(
        rest_path(_name),
        _handler(_spec),
        methods=["POST"],
        name=_name,
        summary=_spec.title,
        description=_spec.description,
        responses=error_responses(400, 401, 403, 404, 409),
        openapi_extra=_openapi(_spec),
    )
