"""One definition per wire shape per dialect (issue 51, point 2): where REST and MCP speak the
same dialect (TelosDB's snake_case), the live app's OpenAPI document and the MCP tools'
output schemas describe the search hit and the document the same way, and each door's shape
is the one in its dialect module."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from bunko.domain.auth import SCOPE_READ
from bunko.operations import aurak, telosdb
from bunko.operations.operation import clean_schema
from tests.e2e.mcp_harness import http_client

pytestmark = pytest.mark.anyio

REST_SETTINGS = {"mcp_output_schemas": True}  # the tools advertise their outputSchema


def resolved(node: Any, components: dict[str, Any]) -> Any:
    """An OpenAPI schema with its `#/components/schemas/` references inlined, in the shape
    MCP advertises (no auto titles)."""
    if isinstance(node, list):
        return [resolved(n, components) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref", "")
    if ref.startswith("#/components/schemas/"):
        return resolved(components[ref.rsplit("/", 1)[1]], components)
    return {k: resolved(v, components) for k, v in node.items()}


def response_schema(openapi: dict[str, Any], path: str, method: str = "get") -> dict[str, Any]:
    content = openapi["paths"][path][method]["responses"]
    status = "201" if "201" in content else "200"
    schema = content[status]["content"]["application/json"]["schema"]
    return clean_schema(resolved(schema, openapi["components"]["schemas"]))


def same_fields(schema: dict[str, Any], leave_out: set[str] = frozenset()) -> dict[str, Any]:
    """What a client relies on: the fields, their schemas and which are required."""
    properties = {k: v for k, v in schema["properties"].items() if k not in leave_out}
    return {"properties": properties, "required": sorted(set(schema["required"]) - leave_out)}


@pytest.fixture(scope="module")
def schemas(rest) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    import anyio

    _, key = rest.services.apikeys.create(workspace_id=str(uuid.uuid4()), scopes=(SCOPE_READ,))

    async def tools() -> dict[str, dict[str, Any]]:
        async with http_client(rest.url, key) as client:
            return {t.name: t.output_schema for t in (await client.list_tools()).tools}

    with rest.client() as http:
        openapi = http.get("/openapi.json").json()
    return openapi, anyio.run(tools)


def test_rest_and_mcp_describe_the_search_hit_the_same_way(schemas):
    openapi, tools = schemas
    rest_hit = response_schema(openapi, "/search")["properties"]["items"]["items"]
    mcp_hit = tools["search_text"]["properties"]["items"]["items"]
    # REST adds one field of its own to TelosDB's hit: what to mark in the passage.
    assert set(rest_hit["properties"]) - set(mcp_hit["properties"]) == {"highlights"}
    assert same_fields(rest_hit, {"highlights"}) == same_fields(mcp_hit)
    assert same_fields(mcp_hit) == same_fields(clean_schema(telosdb.SearchHit.model_json_schema()))


def test_each_door_describes_the_document_in_its_dialect_module(schemas):
    """REST's documents speak aurak (camelCase), MCP's TelosDB (snake_case): each door's
    document is the one definition in its dialect's module."""
    openapi, tools = schemas
    rest_file = response_schema(openapi, "/knowledge-bases/{file_id}")
    assert same_fields(rest_file) == same_fields(
        clean_schema(aurak.KnowledgeBaseFile.model_json_schema())
    )
    listed = response_schema(openapi, "/knowledge-bases")["items"]
    assert same_fields(listed) == same_fields(rest_file)
    summary = same_fields(clean_schema(telosdb.DocumentSummary.model_json_schema()))
    assert same_fields(tools["list_documents"]["properties"]["items"]["items"]) == summary
    assert same_fields(tools["set_document_metadata"]) == summary
    got = tools["get_document"]  # the summary, with the text and the chunks
    assert same_fields(got, {"content", "chunks"}) == summary
