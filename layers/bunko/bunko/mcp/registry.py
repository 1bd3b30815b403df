"""The tool registry: a tool is a typed function `(ctx, args: In) -> Out`; the decorator
records its scope, annotations, profiles and transports, and the types give its schemas."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_type_hints

from mcp_types import ToolAnnotations
from pydantic import BaseModel

if TYPE_CHECKING:
    from bunko.bootstrap import Services
    from bunko.domain.auth import Principal
    from bunko.services.ingest import ChunkItemsService

Profile = Literal["core", "full"]
Transport = Literal["http", "stdio"]
PROFILES: tuple[Profile, ...] = ("core", "full")
TRANSPORTS: tuple[Transport, ...] = ("http", "stdio")


@dataclass(frozen=True)
class ToolContext:
    """What a tool call sees: the services and the caller (whose workspace it works in)."""

    services: Services
    principal: Principal
    transport: Transport

    @property
    def workspace_id(self) -> str:
        return self.principal.workspace_id

    @property
    def items(self) -> ChunkItemsService:
        items = self.services.items
        assert items is not None, "build_services always builds the items service"
        return items


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    scope: str
    annotations: ToolAnnotations
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    run: Callable[[ToolContext, Any], BaseModel]
    profiles: frozenset[str]
    transports: frozenset[str]

    def input_schema(self) -> dict[str, Any]:
        return clean_schema(self.input_model.model_json_schema())

    def output_schema(self) -> dict[str, Any]:
        return clean_schema(self.output_model.model_json_schema())


TOOLS: dict[str, ToolSpec] = {}


def tool(
    *,
    title: str,
    scope: str,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool = False,
    core: bool = False,
    stdio_only: bool = False,
) -> Callable[[Callable], Callable]:
    """Register a tool. The docstring is its description; `core` puts it in the core profile
    (every tool is in full); `stdio_only` hides and refuses it over HTTP."""

    def register(fn: Callable) -> Callable:
        hints = get_type_hints(fn)
        TOOLS[fn.__name__] = ToolSpec(
            name=fn.__name__,
            title=title,
            description=inspect.getdoc(fn) or "",
            scope=scope,
            annotations=ToolAnnotations(
                title=title,
                read_only_hint=read_only,
                destructive_hint=destructive,
                idempotent_hint=idempotent,
                open_world_hint=open_world,
            ),
            input_model=hints["args"],
            output_model=hints["return"],
            run=fn,
            profiles=frozenset(PROFILES if core else ("full",)),
            transports=frozenset(("stdio",) if stdio_only else TRANSPORTS),
        )
        return fn

    return register


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline `$defs` references and drop pydantic's auto titles: the self-contained,
    compact shape MCP clients handle best."""
    defs = schema.pop("$defs", {})

    def walk(node: Any, *, in_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return walk(
                {
                    **defs[ref.removeprefix("#/$defs/")],
                    **{k: v for k, v in node.items() if k != "$ref"},
                }
            )
        out = {}
        for key, value in node.items():
            if key == "title" and not in_properties and isinstance(value, str):
                continue
            out[key] = walk(value, in_properties=key == "properties")
        return out

    return walk(schema)
