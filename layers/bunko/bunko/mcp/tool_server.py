"""build_server: the MCP server (low-level SDK `Server`) over Bunko's services.

The low-level server is used rather than `MCPServer` because Bunko needs what its function
introspection cannot give: strict input schemas that validation really enforces, output
schemas advertised only on request, and a per-call scope check against the caller.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent, Tool
from pydantic import ValidationError as PydanticValidationError

from bunko import __version__
from bunko.asgi.errors import status_for
from bunko.domain.audit import AuditEvent, outcome_of
from bunko.domain.auth import Principal
from bunko.errors import BunkoError, TooManyRequestsError
from bunko.mcp.registry import Attachments, Profile, ToolContext, ToolSpec, Transport
from bunko.mcp.tools_chat import CHAT_TOOLS
from bunko.mcp.tools_moving import MOVING_TOOLS
from bunko.mcp.tools_owners import OWNER_TOOLS
from bunko.mcp.tools_read import READ_TOOLS
from bunko.mcp.tools_research import RESEARCH_TOOLS
from bunko.mcp.tools_sources import SOURCE_TOOLS
from bunko.mcp.tools_write import WRITE_TOOLS
from bunko.services.accounts import who

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


# Every tool the server offers, in the order tools/list shows them.
ALL_TOOLS: tuple[ToolSpec, ...] = (
    *CHAT_TOOLS,
    *READ_TOOLS,
    *RESEARCH_TOOLS,
    *WRITE_TOOLS,
    *SOURCE_TOOLS,
    *OWNER_TOOLS,
    *MOVING_TOOLS,
)
TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in ALL_TOOLS}


def listed_tools(
    *, profile: Profile, transport: Transport, tools: Sequence[ToolSpec] = ALL_TOOLS
) -> list[ToolSpec]:
    """The tools a profile shows on a transport. Profiles change visibility, not permission."""
    return [s for s in tools if profile in s.profiles and transport in s.transports]


def tool_definition(spec: ToolSpec, *, output_schemas: bool) -> Tool:
    op = spec.operation
    return Tool(
        name=op.name,
        title=op.title,
        description=op.description,
        input_schema=op.input_schema(),
        output_schema=op.output_schema() if output_schemas else None,
        annotations=spec.annotations,
    )


def build_server(
    services: Services,
    *,
    profile: Profile | None = None,
    transport: Transport = "http",
    output_schemas: bool | None = None,
    principal: Principal | Callable[[], Principal | None] | None = None,
    tools: Sequence[ToolSpec] = ALL_TOOLS,
) -> Server:
    """An MCP server for one transport. Over HTTP the caller comes from the request (set by
    the guard); over stdio it is `principal`, or what `principal()` answers at each call (an
    API key, whose rights follow its maker's). Defaults come from settings
    (BUNKO_MCP_PROFILE, BUNKO_MCP_OUTPUT_SCHEMAS); `tools`: what it offers (every tool)."""
    settings = services.settings
    profile = profile or settings.mcp_profile
    advertise = settings.mcp_output_schemas if output_schemas is None else output_schemas
    offered = {spec.name: spec for spec in tools}
    definitions = [
        tool_definition(s, output_schemas=advertise)
        for s in listed_tools(profile=profile, transport=transport, tools=tools)
    ]

    async def on_list_tools(ctx: ServerRequestContext, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=definitions)

    async def on_call_tool(
        ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult:
        client = base_url = None
        if ctx.request is not None:
            caller = ctx.request.scope.get(PRINCIPAL_SCOPE_KEY)
            client = (ctx.request.scope.get("client") or (None,))[0]
            base_url = str(ctx.request.base_url).rstrip("/")
        elif callable(principal):
            caller = await anyio.to_thread.run_sync(principal)
        else:
            caller = principal
        return await call_tool(
            services,
            params.name,
            params.arguments or {},
            principal=caller,
            transport=transport,
            tools=offered,
            client=client,
            base_url=base_url,
        )

    schemas = {name: spec.operation.input_schema() for name, spec in offered.items()}

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
    tools: Mapping[str, ToolSpec] = TOOLS,
    client: str | None = None,
    base_url: str | None = None,
) -> CallToolResult:
    """Check, validate, run one tool; every refusal is a tool error an agent can act on. A
    tool that changes something, and any refusal, leaves one event in the audit trail."""
    spec = tools.get(name)
    if spec is None or transport not in spec.transports:
        hint = " (it is offered over stdio only: run `bunko mcp`)" if spec else ""
        return _error(None, f"unknown tool {name!r}{hint}")
    audit = _Audit(services, spec, principal, arguments, client)
    if principal is None:
        audit(401)
        return _error(spec, "not authenticated: send Authorization: Bearer <API key>")
    if not principal.has(spec.scope):
        audit(403)
        return _error(spec, f"forbidden: {name} needs the {spec.scope} scope, which this key lacks")
    try:
        args = spec.operation.input_model.model_validate_json(json.dumps(arguments))
    except PydanticValidationError as exc:
        audit(400)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        return _error(spec, f"invalid arguments for {name}: {problems}")
    context = ToolContext(
        services=services, principal=principal, transport=transport, base_url=base_url
    )
    try:
        result = await anyio.to_thread.run_sync(partial(spec.run, context, args))
    except TooManyRequestsError as exc:
        audit(429)
        log.info("tool %s refused for pace: %s", name, exc)
        return _rate_error(spec, str(exc), exc.retry_after)
    except BunkoError as exc:
        audit(status_for(exc))
        log.info("tool %s refused: %s", name, exc)
        return _error(spec, str(exc))
    except Exception:
        audit(500)
        log.exception("tool %s failed", name)
        return _error(spec, f"{name} failed with an internal error; the server log has details")
    audit(200)
    structured = result.to_structured()
    text = json.dumps(structured, ensure_ascii=False)
    # a tool may attach more than its JSON: a link to a resource, or the resource itself
    more = result.content_blocks() if isinstance(result, Attachments) else []
    return CallToolResult(
        content=[TextContent(type="text", text=text), *more], structured_content=structured
    )


# The arguments that name a tool's object, in the order looked for.
_OBJECT_ARGUMENTS = ("id", "document_id", "corpus_id", "project_id", "answer_id")


class _Audit:
    """One tool call's audit event: kept for a tool that changes something whatever its end,
    and for a read only when refused (docs/audit.md)."""

    def __init__(
        self,
        services: Services,
        spec: ToolSpec,
        principal: Principal | None,
        arguments: dict[str, Any],
        client: str | None,
    ) -> None:
        self.trail, self.spec, self.principal = services.audit, spec, principal
        self.arguments, self.client = arguments, client

    def __call__(self, status: int) -> None:
        outcome = outcome_of(status)
        if self.trail is None or (self.spec.operation.read_only and outcome != "refused"):
            return
        kind = object_id = None
        for key in _OBJECT_ARGUMENTS:
            value = self.arguments.get(key)
            if isinstance(value, str):
                kind = key.removesuffix("_id") if key != "id" else self.spec.name.split("_")[-1]
                object_id = value[:200]
                break
        principal = self.principal
        self.trail.record(
            AuditEvent(
                action=f"mcp:{self.spec.name}",
                outcome=outcome,
                status=status,
                library_id=principal.workspace_id if principal else None,
                object_kind=kind,
                object_id=object_id,
                client=self.client,
                door="mcp",
                **who(principal),
            )
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
