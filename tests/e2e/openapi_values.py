"""Values that pass an OpenAPI schema: enough to reach a route's ownership check with a
well-formed request, from the live app's own document."""

from __future__ import annotations

from typing import Any


def sample_value(schema: dict, spec: dict) -> Any:
    """A valid-looking value for a schema, enough to reach the route's ownership check."""
    schema = resolved(schema, spec)
    if "anyOf" in schema:
        schema = next(s for s in schema["anyOf"] if s.get("type") != "null")
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        return max(schema.get("minimum", 1), 1)
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {
            name: sample_value(sub, spec)
            for name, sub in schema.get("properties", {}).items()
            if name in schema.get("required", [])
        }
    return "x"


def resolved(schema: dict, spec: dict) -> dict:
    ref = schema.get("$ref")
    if ref:
        node: Any = spec
        for part in ref.lstrip("#/").split("/"):
            node = node[part]
        return node
    return schema
