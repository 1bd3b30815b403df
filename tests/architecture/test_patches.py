"""Tests reach the code through its seams, not by patching it (issue 51): a knob is passed at
construction (the engine's tuning record, the DynamoDB store's catalog cap, the search
service's claim rows), a fake port is passed in, or a race lands through a real hook
(botocore's events, the file system). Patching stays for what has no seam (a third party's
internals, a process-wide setting), within a budget, and never on the package's own module
constants: a test that patches one tests a program nobody runs, and drifts from it."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# Every MonkeyPatch `setattr` (whatever the fixture or its `context()` is called) and every
# `unittest.mock.patch`: 28 when this test was written (23 through the `monkeypatch` fixture's
# own name), 15 after.
MAX_PATCHES = 15
CONSTANT = re.compile(r"_*[A-Z][A-Z0-9_]*")


def bunko_names(tree: ast.Module) -> set[str]:
    """The names a test module binds to something of the package (`import bunko.x as m`,
    `from bunko.x import y`), at any depth of the module."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "bunko":
            found |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "bunko":
                    found.add(a.asname or "bunko")
    return found


def is_patch(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return isinstance(func, ast.Name) and func.id == "patch"  # from unittest.mock
    if func.attr == "setattr":  # builtin setattr() is a Name, not an attribute
        return isinstance(func.value, ast.Name)
    text = ast.unparse(func)
    return text in ("mock.patch", "patch.object", "mock.patch.object", "unittest.mock.patch")


@functools.cache
def patches() -> tuple[tuple[str, int, ast.Call, frozenset[str]], ...]:
    """(file, line, the call, the module's names of the package) for every patch in tests/."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = frozenset(bunko_names(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and is_patch(node):
                found.append((str(path.relative_to(TESTS)), node.lineno, node, names))
    return tuple(found)


def patched_constants(call: ast.Call, names: frozenset[str]) -> Iterator[str]:
    """What `call` patches that is an UPPER_CASE or _UPPER attribute of the package:
    `setattr(module, "NAME", v)` on a module imported from bunko, or
    `setattr("bunko.x.NAME", v)`."""
    args = call.args
    if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
        dotted = args[0].value
        if dotted.split(".")[0] == "bunko" and CONSTANT.fullmatch(dotted.rsplit(".", 1)[-1]):
            yield dotted
        return
    if len(args) >= 2 and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
        root = args[0]
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in names and CONSTANT.fullmatch(args[1].value):
            yield f"{ast.unparse(args[0])}.{args[1].value}"


def test_the_tests_patch_within_their_budget():
    found = [f"{path}:{line}" for path, line, _, _ in patches()]
    assert len(found) <= MAX_PATCHES, found


def test_no_test_patches_a_constant_of_the_package():
    constants = [
        f"{path}:{line} patches {name}"
        for path, line, call, names in patches()
        for name in patched_constants(call, names)
    ]
    assert constants == []


def test_the_rules_see_the_patches_they_are_about():
    """Each shape the two rules read, recognised (a rule that sees nothing passes forever)."""
    tree = ast.parse(
        "import bunko.adapters.aws.dynamodb.names as names\n"
        "from bunko.services.search import calibration\n"
        "mp.setattr(names, '_CAP', 1)\n"
        "mp.setattr(calibration, 'CLAIM_ROWS', {})\n"
        "mp.setattr('bunko.services.search.calibration.CLAIM_ROWS', {})\n"
        "patch.setattr(calibration, 'for_claims', len)\n"
        "mock.patch.object(calibration, 'GENERIC', None)\n"
        "mp.setattr(tempfile, 'TMP_MAX', 1)\n"
        "setattr(item, 'NAME', 1)\n"
    )
    names = frozenset(bunko_names(tree))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and is_patch(n)]
    assert len(calls) == 6  # the builtin setattr() is not a patch
    constants = [c for call in calls for c in patched_constants(call, names)]
    assert constants == [
        "names._CAP",
        "calibration.CLAIM_ROWS",
        "bunko.services.search.calibration.CLAIM_ROWS",
        "calibration.GENERIC",
    ]
