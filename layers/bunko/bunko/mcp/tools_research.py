"""The research tools: the research operations (bunko.operations.research) offered over MCP,
each run on the caller's research service and workspace. The REST twins under
/research-api/ run the same operations (http/routes/research.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bunko.mcp.registry import ToolContext, ToolSpec, offered
from bunko.operations.operation import Operation
from bunko.operations.research import RESEARCH_OPERATIONS


def _on_the_callers_research(op: Operation):
    def run(ctx: ToolContext, args: Any) -> BaseModel:
        return op.run(ctx.services.research, ctx.workspace_id, args)

    return run


RESEARCH_TOOLS: tuple[ToolSpec, ...] = tuple(
    offered(op, _on_the_callers_research(op)) for op in RESEARCH_OPERATIONS.values()
)
