"""Fuzz every MCP tool from its own input schema (issue 13, point 7), against a real server:
Hypothesis draws arguments that fit the advertised `inputSchema` and objects that do not
(hypothesis-jsonschema does not run on the Hypothesis this suite pins, so `fits()` below maps
the keywords Bunko's schemas use; an unknown keyword fails the test rather than be ignored). Every call answers a JSON-RPC result (never a protocol error, never a
5xx), every input the schema refuses is a tool error, and a refused call changes nothing.

Bounded: BUNKO_MCP_FUZZ_EXAMPLES examples per tool and kind (default 10); the counts per tool
are printed (`-s`) for the closing note."""

from __future__ import annotations

import json
import os

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.e2e.mcp_harness import deployed

pytestmark = pytest.mark.slow  # hypothesis fuzzes every MCP tool

EXAMPLES = int(os.environ.get("BUNKO_MCP_FUZZ_EXAMPLES", "10"))
ACCEPT = {"Accept": "application/json, text/event-stream"}
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("CI") == "true",
    suppress_health_check=list(HealthCheck),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=3),
    max_leaves=8,
)  # fmt: skip


@pytest.fixture(scope="module")
def seeded_kb(tmp_path_factory):
    with deployed(tmp_path_factory.mktemp("mcp-fuzz") / "data") as deployment:
        key = deployment.key("admin")
        call(deployment.url, key, "add_item_text",
             {"content": "Seed text about lighthouses.", "path": "seed.md"})  # fmt: skip
        yield deployment, key


def rpc(url: str, key: str, method: str, params: dict, request_id: int = 1) -> dict:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    headers = {**ACCEPT, "Authorization": f"Bearer {key}"}
    response = httpx.post(url + "/mcp", json=body, headers=headers, timeout=120)
    assert response.status_code == 200, (method, params, response.status_code, response.text)
    answer = response.json()
    assert "result" in answer, (params, answer)  # a protocol error is a failure here
    return answer["result"]


def call(url: str, key: str, tool: str, arguments: object) -> dict:
    return rpc(url, key, "tools/call", {"name": tool, "arguments": arguments})


def snapshot(deployment, key: str) -> str:
    metadata = deployment.services.metadata
    workspace = deployment.workspace_of(key)
    docs = [(d.id, d.path, d.revision, str(d.status)) for d in metadata.iter_documents(workspace)]
    chunks = [(c.id, c.content) for c in metadata.iter_chunks(workspace)]
    return json.dumps([docs, chunks, deployment.services.index.count(workspace)])


def tools(seeded_kb) -> list[dict]:
    deployment, key = seeded_kb
    return rpc(deployment.url, key, "tools/list", {})["tools"]


def test_every_tool_survives_valid_and_invalid_arguments(seeded_kb):
    deployment, key = seeded_kb
    counts = {tool["name"]: fuzz_tool(deployment, key, tool) for tool in tools(seeded_kb)}
    for name, tally in counts.items():
        assert tally["valid"] > 0 and tally["invalid"] > 0, (name, tally)
    assert tools(seeded_kb)  # the server still answers after every example
    print("\nMCP fuzz per tool:", json.dumps(counts))


def fuzz_tool(deployment, key: str, tool: dict) -> dict[str, int]:
    url, name, schema = deployment.url, tool["name"], tool["inputSchema"]
    validator = Draft202012Validator(schema)
    tally = {"valid": 0, "invalid": 0, "tool_errors": 0}

    @FUZZ
    @given(arguments=from_schema(schema))
    def valid(arguments: dict) -> None:
        before = snapshot(deployment, key)
        result = call(url, key, name, arguments)
        tally["valid"] += 1
        if result.get("isError"):
            tally["tool_errors"] += 1
            text = result["content"][0]["text"]
            assert text and "Traceback" not in text
            assert snapshot(deployment, key) == before, (name, arguments, text)

    @FUZZ
    @given(arguments=st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=4)
           | from_schema(schema).flatmap(lambda ok: _broken(ok, schema)))  # fmt: skip
    def invalid(arguments: dict) -> None:
        if validator.is_valid(arguments):
            return
        before = snapshot(deployment, key)
        result = call(url, key, name, arguments)
        tally["invalid"] += 1
        assert result.get("isError"), (name, arguments, result)
        assert "Traceback" not in result["content"][0]["text"]
        assert snapshot(deployment, key) == before, (name, arguments)

    valid()
    invalid()
    return tally


KNOWN = {"type", "properties", "required", "additionalProperties", "title", "description",
         "default", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
         "exclusiveMinimum", "exclusiveMaximum", "anyOf", "enum", "const", "items", "$ref",
         "$defs", "minItems", "maxItems", "examples"}  # fmt: skip


def from_schema(schema: dict, root: dict | None = None) -> st.SearchStrategy:
    """Values that fit a JSON schema, for the keywords in KNOWN."""
    root = root or schema
    unknown = set(schema) - KNOWN
    assert not unknown, f"teach from_schema these keywords: {unknown}"
    if "$ref" in schema:
        return from_schema(root["$defs"][schema["$ref"].rsplit("/", 1)[-1]], root)
    if "anyOf" in schema:
        return st.one_of([from_schema(s, root) for s in schema["anyOf"]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        props, required = schema.get("properties", {}), set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v, root) for k, v in props.items() if k in required},
            optional={k: from_schema(v, root) for k, v in props.items() if k not in required},
        )
    if kind == "string":
        if schema.get("format") == "uuid":
            return st.uuids().map(str)
        low, high = schema.get("minLength", 0), min(schema.get("maxLength", 200), 200)
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(
                lambda v: low <= len(v) <= schema.get("maxLength", 10**9)
            )
        return st.text(min_size=low, max_size=high)
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), root), max_size=5)
    raise AssertionError(f"teach from_schema the schema {schema}")


def _broken(arguments: dict, schema: dict) -> st.SearchStrategy[dict]:
    """A valid object with one thing wrong: a required field gone, a field of the wrong
    type, or a field the schema does not know."""
    options: list[st.SearchStrategy[dict]] = [
        JSON_VALUES.map(lambda v: {**arguments, "unexpected_field": v})
    ]
    for field in schema.get("required", []):
        options.append(st.just({k: v for k, v in arguments.items() if k != field}))
    for field in schema.get("properties", {}):
        options.append(JSON_VALUES.map(lambda v, f=field: {**arguments, f: v}))
    return st.one_of(options)
