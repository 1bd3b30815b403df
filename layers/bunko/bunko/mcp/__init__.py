"""The MCP server: TelosDB's tool set over streamable HTTP, legacy SSE and stdio.

Names resolve lazily, so `bunko --help` does not import the MCP SDK and the web stack.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "build_server": "bunko.mcp.tool_server",
    "call_tool": "bunko.mcp.tool_server",
    "listed_tools": "bunko.mcp.tool_server",
    "create_mcp_app": "bunko.mcp.http",
    "mount_mcp": "bunko.mcp.http",
    "run_stdio": "bunko.mcp.stdio",
    "serve_stdio": "bunko.mcp.stdio",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
