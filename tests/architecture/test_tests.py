"""The tests' own layout: a fixture name means one thing. A name defined in several modules
(the `rest` server was defined 53 times, each a copy) is one shared fixture in the conftest.py
of the folder that uses it, or, where the modules built different things, names that say
what each holds."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


@functools.cache  # both tests read it: the test tree parsed once
def fixture_definitions() -> dict[str, list[str]]:
    """Fixture name → the files that define it (module-level functions under a
    `pytest.fixture` decorator, called or not)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if any("fixture" in ast.unparse(d) for d in node.decorator_list):
                found[node.name].append(str(path.relative_to(TESTS)))
    return found


def test_each_fixture_name_is_defined_once():
    twice = {name: files for name, files in fixture_definitions().items() if len(files) > 1}
    assert twice == {}


def test_the_shared_servers_are_the_conftests_and_nowhere_else():
    defined = fixture_definitions()
    assert defined["rest"] == ["conftest.py"]
    assert defined["fresh_rest"] == ["conftest.py"]
    assert defined["kb"] == ["conftest.py"]
