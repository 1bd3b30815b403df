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

router = APIRouter(tags=["research"])

# Each tool's REST twin, written out: a public path is a contract (sosoapi's clients call
# /research-api/corpora/get), so renaming a tool must not move it. Every research operation
# has exactly one path here, checked when this module loads.
REST_PATHS: dict[str, str] = {
    "research_projects_create": "/research-api/projects/create",
    "research_projects_list": "/research-api/projects/list",
    "research_projects_delete": "/research-api/projects/delete",
    "research_evidence_add": "/research-api/evidence/add",
    "research_evidence_remove": "/research-api/evidence/remove",
    "research_corpora_seal": "/research-api/corpora/seal",
    "research_corpora_get": "/research-api/corpora/get",
    "research_corpora_list": "/research-api/corpora/list",
    "research_corpora_search": "/research-api/corpora/search",
}
if REST_PATHS.keys() != RESEARCH_OPERATIONS.keys():
    raise RuntimeError(
        "research tools and their REST paths differ: "
        f"{sorted(REST_PATHS.keys() ^ RESEARCH_OPERATIONS.keys())}"
    )


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
        REST_PATHS[_op.name],
        _handler(_op),
        methods=["POST"],
        name=_op.name,
        dependencies=[ReadsOnly] if _op.read_only else [],
        summary=_op.title,
        description=_op.description,
        responses=error_responses(400, 401, 403, 404, 409),
        openapi_extra=_openapi(_op),
    )
