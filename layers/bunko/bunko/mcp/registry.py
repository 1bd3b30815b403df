"""MCP's tools: a tool is an Operation (bunko.operations.operation: its name, scope, hints and
typed models) offered on some transports, with the profiles its `core` flag puts it in. A tool
written for MCP alone is a typed function `(ctx, args: In) -> Out` under `@tool`, which
returns its ToolSpec; each tools_* module lists its specs, and build_server serves the
explicit list in tool_server.ALL_TOOLS (nothing registers itself on import)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from mcp_types import ToolAnnotations
from pydantic import BaseModel

from bunko.operations.operation import Operation, operation

if TYPE_CHECKING:
    from bunko.bootstrap import Services
    from bunko.domain.auth import Principal
    from bunko.services.ingest import ChunkItemsService
    from bunko.services.library import Library

Profile = Literal["core", "full"]
Transport = Literal["http", "stdio"]
PROFILES: tuple[Profile, ...] = ("core", "full")
TRANSPORTS: tuple[Transport, ...] = ("http", "stdio")


@runtime_checkable
class Attachments(Protocol):
    """A tool's result that carries content blocks beside its JSON (mcp/tools_moving.py)."""

    def content_blocks(self) -> list[Any]: ...


@dataclass(frozen=True)
class ToolContext:
    """What a tool call sees: the services and the caller (whose workspace it works in)."""

    services: Services
    principal: Principal
    transport: Transport
    base_url: str | None = None  # the server's address over HTTP (for links to its REST door)

    @property
    def workspace_id(self) -> str:
        return self.principal.workspace_id

    @property
    def items(self) -> ChunkItemsService:
        items = self.services.items
        assert items is not None, "build_services always builds the items service"
        return items

    @property
    def library(self) -> Library:
        """What the caller's library holds, read as every door reads it."""
        return self.services.library


@dataclass(frozen=True)
class ToolSpec:
    """An operation offered as a tool: `run` calls it with what it needs of the call (its
    service and the caller's workspace); `transports` are where it is shown and served."""

    operation: Operation
    run: Callable[[ToolContext, Any], BaseModel]
    transports: frozenset[Transport]

    @property
    def name(self) -> str:
        return self.operation.name

    @property
    def scope(self) -> str:
        return self.operation.scope

    @property
    def profiles(self) -> frozenset[Profile]:
        """Every tool is in full; the core profile holds the operations marked core."""
        return frozenset(PROFILES if self.operation.core else ("full",))

    @property
    def annotations(self) -> ToolAnnotations:
        op = self.operation
        return ToolAnnotations(
            title=op.title,
            read_only_hint=op.read_only,
            destructive_hint=op.destructive,
            idempotent_hint=op.idempotent,
            open_world_hint=op.open_world,
        )


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
) -> Callable[[Callable], ToolSpec]:
    """The ToolSpec of a tool function. The docstring is its description; `core` puts it in
    the core profile (every tool is in full); `stdio_only` hides and refuses it over HTTP."""

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

    def spec(fn: Callable) -> ToolSpec:
        record(fn)
        return offered(recorded[fn.__name__], fn, stdio_only=stdio_only)

    return spec


def offered(
    op: Operation, run: Callable[[ToolContext, Any], BaseModel], *, stdio_only: bool = False
) -> ToolSpec:
    """`op` as a tool on every transport (`stdio_only`: hidden and refused over HTTP)."""
    return ToolSpec(
        operation=op,
        run=run,
        transports=frozenset(("stdio",) if stdio_only else TRANSPORTS),
    )
