"""The MCP server: TelosDB's tool set over streamable HTTP, legacy SSE and stdio.

Names resolve lazily, so `bunko --help` does not import the MCP SDK and the web stack.
"""

from __future__ import annotations

from bunko.lazy_exports import lazy_face

_EXPORTS = {
    "build_server": "tool_server",
    "call_tool": "tool_server",
    "listed_tools": "tool_server",
    "create_mcp_app": "http",
    "mount_mcp": "http",
    "run_stdio": "stdio",
    "serve_stdio": "stdio",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
