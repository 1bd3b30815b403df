"""One definition per wire shape per dialect (issue 51, point 2): the shapes TelosDB's
dialect (operations/telosdb.py) and aurak's (operations/aurak.py) speak are defined there
once; a door adds to one by subclassing it, never by writing its fields out again (the
search hit was written twice and drifted: REST's `engines` took any string, MCP's two)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "bunko" / "bunko"
DIALECTS = ("operations/telosdb.py", "operations/aurak.py")
DOORS = ("http", "mcp")
SMALLEST = 5  # fewer fields than this are not a shape worth naming (an id and a message)


def fields_of(tree: ast.Module) -> dict[str, tuple[set[str], list[str]]]:
    """Class name → (its annotated field names, the names of its bases)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names = {
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
            found[node.name] = (names, [ast.unparse(b) for b in node.bases])
    return found


def test_no_door_writes_out_a_dialect_shape_again():
    shapes = {
        f"{path}:{name}": names
        for path in DIALECTS
        for name, (names, _) in fields_of(ast.parse((PACKAGE / path).read_text())).items()
        if len(names) >= SMALLEST
    }
    assert shapes, "the dialect modules define the wire shapes"
    copies = [
        f"{path.relative_to(PACKAGE)}:{name} repeats {shape}"
        for door in DOORS
        for path in sorted((PACKAGE / door).rglob("*.py"))
        for name, (names, bases) in fields_of(ast.parse(path.read_text())).items()
        for shape, shape_names in shapes.items()
        if shape_names <= names and shape.rsplit(":", 1)[1] not in bases
    ]
    assert copies == []
