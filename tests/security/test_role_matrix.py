"""The role table of docs/security.md ("Rights follow the person (round 3)"), replayed on a real
server (issue 46, scope 2): every REST operation of the running app's OpenAPI document and every
MCP tool of `tools/list`, called in one shared library by a viewer, an editor, an owner, an
installation admin who is not a member, a former member and a deleted user, must answer as
the table says, and the table must name every route, tool and CLI command there is (a new one
fails here until it is given its row).

A cell is `yes` (the call gets past every rights check: a 2xx, or a 400/404/409 about the
request itself), or the refusal: `403`, `404` (the library is not theirs: it answers as one
that does not exist) or `401` (the token or key no longer works). Calls use made-up ids
inside the real library, so a call let through changes nothing that a later call needs; the
few that would (deleting the library, signing out) run last.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path
from typing import Any

import click
import pytest
import typer
from mcp import MCPError

from bunko.cli import app as cli_app
from tests.e2e.mcp_harness import http_client
from tests.e2e.openapi_values import resolved, sample_value
from tests.e2e.rest_harness import User, serve

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"
COLUMNS = ("viewer", "editor", "owner", "admin", "former member", "deleted user")
# Calls whose success would end what later calls need: made after every other, in this order
# (after signing out, each person signs in again).
LAST = ("POST /auth/logout", "DELETE /libraries/{library_id}")
ADMIN_WITHOUT_LIBRARY = re.compile(r"^(GET|POST|PATCH|DELETE) /users|^GET /libraries/all$|"
                                   r"^DELETE /libraries/\{library_id\}$")  # fmt: skip


def documented(kind: str) -> dict[str, tuple[str, ...]]:
    """The rows of one role table in docs/security.md: `kind` is "route", "tool" or
    "command"; each row is `| `name` | cell | … |`."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Rights follow the person (round 3)", 1)[1]
    start = section.index(f"| {kind} |")
    rows: dict[str, tuple[str, ...]] = {}
    for line in section[start:].splitlines()[2:]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = tuple(cells[1:])
    return rows


@pytest.fixture(scope="module")
def roles(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("role-matrix") / "data") as rest:
        owner = rest.new_user()
        library = owner.client.post("/libraries", json={"name": "Role Matrix"}).json()["id"]
        people: dict[str, User] = {"owner": owner, "admin": rest.admin()}
        for role in ("viewer", "editor", "former member", "deleted user"):
            person = rest.new_user()
            level = role if role in ("viewer", "editor") else "viewer"
            added = owner.client.put(f"/libraries/{library}/members",
                                     json={"username": person.username, "role": level})  # fmt: skip
            assert added.status_code == 200, added.text
            people[role] = person
        for person in people.values():
            person.client.headers["X-Bunko-Library"] = library
        keys = {
            role: people[role].client.post("/api-keys", json={"scopes": scopes}).json()["key"]
            for role, scopes in (
                ("viewer", ["kb:read"]), ("editor", ["kb:read", "kb:write", "agent:research"]),
                ("owner", ["kb:read", "kb:write", "agent:research"]),
                ("former member", ["kb:read"]), ("deleted user", ["kb:read"]),
            )
        }  # fmt: skip
        former, deleted = people["former member"], people["deleted user"]
        gone = owner.client.delete(f"/libraries/{library}/members/{former.id}")
        assert gone.status_code == 200, gone.text
        with rest.client(people["admin"].token) as admin:
            assert admin.delete(f"/users/{deleted.id}").status_code == 200
        yield rest, people, keys, library


async def _tool_outcomes(url: str, key: str, library: str) -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        async with http_client(url, key) as client:
            tools = (await client.list_tools()).tools
            for tool in tools:
                schema = tool.input_schema
                args = {n: sample_value(s, schema) for n, s in schema.get("properties", {}).items()
                        if n in schema.get("required", [])}  # fmt: skip
                for name, sub in schema.get("properties", {}).items():
                    if name in args and resolved(sub, schema).get("format") == "uuid":
                        args[name] = library if name == "workspace_id" else str(uuid.uuid4())
                try:
                    result = await client.call_tool(tool.name, args)
                except MCPError as exc:  # refused for the key's scope, or (as REST) the role
                    refused = "scope" in str(exc) or "only the library's owners" in str(exc)
                    found[tool.name] = "403" if refused else f"error: {exc}"
                    continue
                text = " ".join(getattr(c, "text", "") for c in result.content)
                refused = result.is_error and (
                    "scope, which this key lacks" in text or "only the library's owners" in text
                )
                found[tool.name] = "403" if refused else "yes"
    except BaseException as exc:  # the session itself refused: the key no longer works
        if "401" not in repr(exc) and "nauthorized" not in repr(exc):
            raise
        return {"*": "401"}
    return found


def test_every_mcp_tool_answers_each_roles_key_as_the_table_says(roles):
    """The admin column is `—`: a key made in a shared library never carries admin. (Runs
    before the REST matrix, which ends by deleting the library.)"""
    rest, _, keys, library = roles
    table = documented("tool")
    outcomes = {role: asyncio.run(_tool_outcomes(rest.url, keys[role], library))
                for role in COLUMNS if role != "admin"}  # fmt: skip
    tools = sorted(outcomes["viewer"])
    rows = {
        tool: tuple(
            "—" if role == "admin" else outcomes[role].get(tool, outcomes[role].get("*", "?"))
            for role in COLUMNS
        )
        for tool in tools
    }
    wrong = sorted(set(tools) ^ set(table)) + [t for t in tools if rows[t] != table.get(t)]
    assert not wrong, "rows as observed:\n" + "\n".join(
        f"| `{t}` | {' | '.join(rows[t])} |" for t in tools
    )


def _outcome(response) -> str:
    if response.status_code in (401, 403):
        return str(response.status_code)
    if response.status_code == 404 and "library" in response.text:
        return "404"
    assert response.status_code < 500, response.text
    return "yes"


def _call(client, spec: dict, path: str, method: str, op: dict, library: str):
    url, query = path, {}
    for param in op.get("parameters", []):
        name = param["name"]
        if param["in"] == "header" or not (param.get("required") or param["in"] == "path"):
            continue
        value = library if name == "library_id" else str(uuid.uuid4())
        if name == "q":
            value = "words"
        if param["in"] == "path":
            url = url.replace("{" + name + "}", value)
        else:
            query[name] = value
    kwargs: dict[str, Any] = {"params": query}
    content = op.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        kwargs["json"] = sample_value(resolved(content["application/json"]["schema"], spec), spec)
    elif "multipart/form-data" in content:
        kwargs["files"] = {"file": ("probe.txt", b"probe text", "text/plain")}
    return client.request(method.upper(), url, **kwargs)


def _routes(spec: dict) -> list[tuple[str, str, dict]]:
    found = [
        (f"{method.upper()} {path}", path, op | {"method": method})
        for path, ops in spec["paths"].items()
        for method, op in ops.items()
        if op.get("security")
    ]
    return sorted(found, key=lambda r: LAST.index(r[0]) + 1 if r[0] in LAST else 0)


def test_every_rest_route_answers_each_role_as_the_table_says(roles):
    rest, people, _, library = roles
    spare = rest.client(people["owner"].token).post("/libraries", json={"name": "Spare"})
    assert spare.status_code == 201, spare.text
    spare = spare.json()["id"]
    table = documented("route")  # a route missing from it fails below, with its row
    spec = people["owner"].client.get("/openapi.json").json()
    routes = _routes(spec)
    observed: dict[str, list[str]] = {name: [] for name, *_ in routes}
    for name, path, op in routes:
        for role in COLUMNS:
            client = people[role].client
            if role == "admin" and ADMIN_WITHOUT_LIBRARY.match(name):
                client = rest.client(people["admin"].token)  # acting on the installation
            if name == "DELETE /libraries/{library_id}" and role == "admin":
                # another library of the owner's: the owner deletes the matrix's own
                observed[name].append(_outcome(client.delete(f"/libraries/{spare}")))
                continue
            response = _call(client, spec, path, op["method"], op, library)
            observed[name].append(_outcome(response))
        if name == "POST /auth/logout":  # every token of theirs has ended: sign in again
            for role, person in people.items():
                if role != "deleted user":
                    person.client = rest.login(person.username, person.password).client
                    person.client.headers["X-Bunko-Library"] = library
    wrong = [n for n, o in observed.items() if tuple(o) != table.get(n)]
    assert not wrong, "rows as observed:\n" + "\n".join(
        f"| `{n}` | {' | '.join(observed[n])} |" for n in wrong
    )


def _commands(group: click.Group, prefix: str = "bunko") -> list[str]:
    names = []
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group (typer may bring its own click)
            names += _commands(command, f"{prefix} {name}")
        else:
            names.append(f"{prefix} {name}")
    return names


def test_every_cli_command_is_in_the_table():
    commands = _commands(typer.main.get_command(cli_app))
    assert sorted(commands) == sorted(documented("command")), "docs/security.md CLI table"
