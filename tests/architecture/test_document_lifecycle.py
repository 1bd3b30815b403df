"""A Document's status changes only through its lifecycle methods (domain/documents.py:
queue, start_indexing, complete, fail, new_revision), never by a status assigned elsewhere
(issue 48: it was assigned in nine places across the ingest wing). Another entity with a
status of its own (a library move's job) follows the same rule: only its own methods
assign it (`self.status`)."""

from __future__ import annotations

import ast
from pathlib import Path

import bunko

PACKAGE = Path(bunko.__file__).parent
OWNER = PACKAGE / "domain" / "documents.py"


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        found = []
        for target in node.targets:
            found += target.elts if isinstance(target, ast.Tuple) else [target]
        return found
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


def test_only_the_document_assigns_its_status():
    assigned = []
    for module in sorted(PACKAGE.rglob("*.py")):
        if module == OWNER:
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            for target in _targets(node):
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr in ("status", "error")
                    and not (isinstance(target.value, ast.Name) and target.value.id == "self")
                ):
                    assigned.append(f"{module.relative_to(PACKAGE)}:{node.lineno}")
    assert assigned == []
