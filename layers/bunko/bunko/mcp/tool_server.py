"""build_server: the MCP server (low-level SDK `Server`) over Bunko's services.

The low-level server is used rather than `MCPServer` because Bunko needs what its function
introspection cannot give: strict input schemas that validation really enforces, output
schemas advertised only on request, and a per-call scope check against the caller.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent, Tool
from pydantic import ValidationError as PydanticValidationError

from bunko import __version__
from bunko.domain.auth import Principal
from bunko.errors import BunkoError, TooManyRequestsError
from bunko.mcp import (  # noqa: F401  (importing registers the tools)
    tools_chat,
    tools_read,
    tools_research,
    tools_write,
)
from bunko.mcp.registry import TOOLS, Profile, ToolContext, ToolSpec, Transport

if TYPE_CHECKING:
    from bunko.bootstrap import Services

log = logging.getLogger(__name__)

# The HTTP guard (bunko.mcp.auth) puts the caller's Principal in the ASGI scope under this key.
PRINCIPAL_SCOPE_KEY = "bunko.principal"

INSTRUCTIONS = (
    "Bunko is a knowledge base. Find knowledge with search_text (hybrid meaning + keyword "
    "search; list_categories gives its category filter values), read it with get_document or "
    "get_item_by_id, browse with list_documents, and store text with add_item_text. Items are "
    "chunks of documents; their ids come from search_text and get_document."
)


def listed_tools(*, profile: Profile, transport: Transport) -> list[ToolSpec]:
    """The tools a profile shows on a transport. Profiles change visibility, not permission."""
    return [s for s in TOOLS.values() if profile in s.profiles and transport in s.transports]


def tool_definition(spec: ToolSpec, *, output_schemas: bool) -> Tool:
    return Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema(),
        output_schema=spec.output_schema() if output_schemas else None,
        annotations=spec.annotations,
    )


def build_server(
    services: Services,
    *,
    profile: Profile | None = None,
    transport: Transport = "http",
    output_schemas: bool | None = None,
    principal: Principal | Callable[[], Principal | None] | None = None,
) -> Server:
    """An MCP server for one transport. Over HTTP the caller comes from the request (set by
    the guard); over stdio it is `principal`, or what `principal()` answers at each call (an
    API key, whose rights follow its maker's). Defaults come from settings
    (BUNKO_MCP_PROFILE, BUNKO_MCP_OUTPUT_SCHEMAS)."""
    settings = services.settings
    profile = profile or settings.mcp_profile
    advertise = settings.mcp_output_schemas if output_schemas is None else output_schemas
    tools = [
        tool_definition(s, output_schemas=advertise)
        for s in listed_tools(profile=profile, transport=transport)
    ]

    async def on_list_tools(ctx: ServerRequestContext, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult:
        if ctx.request is not None:
            caller = ctx.request.scope.get(PRINCIPAL_SCOPE_KEY)
        elif callable(principal):
            caller = await anyio.to_thread.run_sync(principal)
        else:
            caller = principal
        return await call_tool(
            services, params.name, params.arguments or {}, principal=caller, transport=transport
        )

    schemas = {name: spec.input_schema() for name, spec in TOOLS.items()}

    def input_schema(name: str) -> dict | None:
        return schemas.get(name)

    return Server(
        "bunko",
        version=__version__,
        title="Bunko",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        get_tool_input_schema=input_schema,
    )


async def call_tool(
    services: Services,
    name: str,
    arguments: dict[str, Any],
    *,
    principal: Principal | None,
    transport: Transport,
) -> CallToolResult:
    """Check, validate, run one tool; every refusal is a tool error an agent can act on."""
    spec = TOOLS.get(name)
    if spec is None or transport not in spec.transports:
        hint = " (it is offered over stdio only: run `bunko mcp`)" if spec else ""
        return _error(None, f"unknown tool {name!r}{hint}")
    if principal is None:
        return _error(spec, "not authenticated: send Authorization: Bearer <API key>")
    if not principal.has(spec.scope):
        return _error(spec, f"forbidden: {name} needs the {spec.scope} scope, which this key lacks")
    try:
        args = spec.input_model.model_validate_json(json.dumps(arguments))
    except PydanticValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        return _error(spec, f"invalid arguments for {name}: {problems}")
    context = ToolContext(services=services, principal=principal, transport=transport)
    try:
        result = await anyio.to_thread.run_sync(partial(spec.run, context, args))
    except TooManyRequestsError as exc:
        log.info("tool %s refused for pace: %s", name, exc)
        return _rate_error(spec, str(exc), exc.retry_after)
    except BunkoError as exc:
        log.info("tool %s refused: %s", name, exc)
        return _error(spec, str(exc))
    except Exception:
        log.exception("tool %s failed", name)
        return _error(spec, f"{name} failed with an internal error; the server log has details")
    structured = result.to_structured()
    text = json.dumps(structured, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _rate_error(spec: ToolSpec, message: str, seconds: int) -> CallToolResult:
    """A refusal for pace only: the wait in words an agent can act on, and as a number in
    the result's structured content (`retryAfterSeconds`) for a client that reads fields."""
    unit = "second" if seconds == 1 else "seconds"
    message = (
        f"{message}. Nothing was stored: wait {seconds} {unit}, then call {spec.name} again "
        f"with the same arguments (retryAfterSeconds: {seconds})"
    )
    if spec.name == "search_text":
        return _error(spec, message)
    body = {"error": message, "retryAfterSeconds": seconds}
    return CallToolResult(
        content=[TextContent(type="text", text=message)], structured_content=body, is_error=True
    )


def _error(spec: ToolSpec | None, message: str) -> CallToolResult:
    if spec is not None and spec.name == "search_text":
        # TelosDB clients parse content[0].text and rely on `items` being an array.
        body = {"items": [], "vector_search_used": False, "error": message}
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
            structured_content=body,
            is_error=True,
        )
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
