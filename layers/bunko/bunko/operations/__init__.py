"""What more than one door offers, below the doors: plain typed operations. Each takes the
service it works on, the caller's workspace and a strict input model, and returns an output
model; it carries the scope it needs and the hints a door advertises. MCP offers them as
tools (mcp/tools_research.py), REST as routes (http/routes/research.py); neither door
imports the other.

- `operation`: the Operation record, its decorator, and the schema shape both doors show;
- `models`: the strict input and the output base models;
- `research`: the research operations, on `research_inputs` and `research_outputs`.
- `telosdb`, `aurak`: the wire shapes of each dialect (TelosDB's snake_case, aurak's
  camelCase), one definition each, which every door speaking that dialect answers with.
"""
