"""The tool registry: a tool is a typed function `(ctx, args: In) -> Out`; the decorator
records its scope, annotations, profiles and transports, and the types give its schemas.
An operation more than one door offers (bunko.operations) is added as a tool the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcp_types import ToolAnnotations
from pydantic import BaseModel

from bunko.operations.operation import Operation, clean_schema, operation

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

    recorded: dict[str, Operation] = {}
    record = operation(
        recorded,
        title=title,
        scope=scope,
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        open_world=open_world,
        core=core,
    )

    def register(fn: Callable) -> Callable:
        record(fn)
        add_operation(recorded[fn.__name__], fn, stdio_only=stdio_only)
        return fn

    return register


def add_operation(
    op: Operation, run: Callable[[ToolContext, Any], BaseModel], *, stdio_only: bool = False
) -> None:
    """Offer `op` as a tool on every transport (`stdio_only`: hidden and refused over HTTP);
    `run` calls it with what it needs of the call (its service and the caller's workspace)."""
    TOOLS[op.name] = ToolSpec(
        name=op.name,
        title=op.title,
        description=op.description,
        scope=op.scope,
        annotations=ToolAnnotations(
            title=op.title,
            read_only_hint=op.read_only,
            destructive_hint=op.destructive,
            idempotent_hint=op.idempotent,
            open_world_hint=op.open_world,
        ),
        input_model=op.input_model,
        output_model=op.output_model,
        run=run,
        profiles=frozenset(PROFILES if op.core else ("full",)),
        transports=frozenset(("stdio",) if stdio_only else TRANSPORTS),
    )
