"""The composition root stays a short list of wing builders, and each door reaches only the
services it declares (issue 51: a root and a container that do not grow with every feature)."""

from __future__ import annotations

import ast
from dataclasses import fields

from tests.architecture.source import PACKAGE, door_modules

# `wire_services` calls one builder per wing (bootstrap/<wing>.py); a new service goes in its
# wing's builder and bundle, not here.
MAX_ROOT_LINES = 40

# What each door module (and what starts the doors) reaches of the container, by name: a door
# that needs one more service adds it here, in sight of review. Modules absent reach nothing.
DOOR_REACHES = {
    "cli.py": {"audit", "close", "ingest", "library", "search"},
    "cli_agents.py": {"apikeys", "audit", "close", "library"},  # the operator's keys recorded
    "cli_moving.py": {"close", "library"},
    "cli_options.py": {"accounts", "library"},
    "cli_answers.py": {"close", "missing"},
    "cli_sources.py": {"close", "library", "sources"},
    "drops/s3_events.py": {"ingest", "library", "model_switch", "pipeline", "uploads"},
    "embedded_server.py": {"accounts", "close", "ingest", "settings"},
    "http/app.py": {"audit", "moves", "originals", "settings", "sources", "upload_signer"},
    "http/deps.py": {"accounts", "conversions", "identity", "knowledge_base", "vision"},
    "http/routes/api_keys.py": {"apikeys"},
    "http/routes/answers.py": {"answers", "missing"},
    "http/routes/audit.py": {"audit"},
    "http/routes/auth.py": {"settings"},
    "http/routes/chat.py": {"answers", "chat", "chat_slots", "search"},
    "http/routes/conversations.py": {"conversations"},
    "http/routes/drop_folder.py": {"settings"},
    "http/routes/health.py": {"identity", "library", "settings", "status"},
    "http/routes/oidc.py": {"accounts", "settings"},
    "http/routes/openai_compat.py": {"accounts", "answers", "chat", "chat_slots", "search"},
    "http/routes/moving.py": {"accounts", "identity", "moves", "uploads"},
    "http/routes/originals.py": {"originals"},
    "http/routes/research.py": {"research"},
    "http/routes/search.py": {"library", "search"},
    "http/routes/sources.py": {"sources"},
    "http/routes/telosdb.py": {"library", "pipeline", "status"},
    "http/routes/uploads.py": {"ingest", "upload_signer", "uploads"},
    "mcp/http.py": {"accounts", "identity", "settings"},
    "mcp/registry.py": {"items", "library"},
    "mcp/stdio.py": {"close", "identity"},
    "mcp/tool_server.py": {"audit", "settings"},
    "mcp/tools_chat.py": {"answers", "chat", "chat_slots", "search"},
    "mcp/tools_moving.py": {"accounts", "moves"},
    "mcp/tools_owners.py": {"answers", "audit", "missing"},
    "mcp/tools_sources.py": {"sources"},
    "mcp/tools_read.py": {"search"},
    "mcp/tools_research.py": {"research"},
    "mcp/tools_write.py": {"ingest", "pipeline", "status", "uploads"},
}


def reached(tree: ast.AST) -> set[str]:
    """The names read off the container: `services.x`, `ctx.services.x`, `self._services.x`."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = getattr(node.value, "id", None) or getattr(node.value, "attr", None)
            if owner in ("services", "_services"):
                names.add(node.attr)
    return names


def test_wire_services_is_a_short_list_of_wing_builders():
    tree = ast.parse((PACKAGE / "bootstrap" / "root.py").read_text(encoding="utf-8"))
    (wire,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "wire_services"]
    assert wire.end_lineno is not None
    assert wire.end_lineno - wire.lineno + 1 <= MAX_ROOT_LINES


def test_each_door_reaches_only_the_services_it_declares():
    measured = {
        str(path.relative_to(PACKAGE)): names
        for path in door_modules()
        if (names := reached(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert measured == DOOR_REACHES


def test_what_the_doors_declare_is_in_the_container():
    from bunko.bootstrap.root import Services

    container = {f.name for f in fields(Services)} | {"close"}
    assert set().union(*DOOR_REACHES.values()) <= container
