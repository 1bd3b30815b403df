"""An operation is a typed function `(service, caller_workspace, args: In) -> Out`; the
decorator records its scope and hints, and the types give its schemas."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel


@dataclass(frozen=True)
class Operation:
    name: str
    title: str
    description: str
    scope: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    core: bool  # in MCP's core profile (every operation is in full)
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    run: Callable[[Any, str, Any], BaseModel]

    def input_schema(self) -> dict[str, Any]:
        return clean_schema(self.input_model.model_json_schema())

    def output_schema(self) -> dict[str, Any]:
        return clean_schema(self.output_model.model_json_schema())


def operation(
    into: dict[str, Operation],
    *,
    title: str,
    scope: str,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool = False,
    core: bool = False,
) -> Callable[[Callable], Callable]:
    """Record an operation in `into` under its function's name; the docstring is its
    description."""

    def record(fn: Callable) -> Callable:
        hints = get_type_hints(fn)
        into[fn.__name__] = Operation(
            name=fn.__name__,
            title=title,
            description=inspect.getdoc(fn) or "",
            scope=scope,
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            open_world=open_world,
            core=core,
            input_model=hints["args"],
            output_model=hints["return"],
            run=fn,
        )
        return fn

    return record


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
