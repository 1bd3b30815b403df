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


class _MarkOption:
    """The one option `pytest_ignore_collect` reads: `-m`'s expression."""

    def __init__(self, expression: str) -> None:
        self.expression = expression

    def getoption(self, name: str, default: object = None) -> str:
        assert name == "markexpr"
        return self.expression


def test_only_what_no_test_of_m_could_select_is_left_unimported():
    from tests.conftest import pytest_ignore_collect

    slow = TESTS / "e2e" / "test_cli.py"  # pytestmark = pytest.mark.slow
    on_aws = TESTS / "aws" / "test_cli_on_aws.py"  # under tests/aws/, and slow
    plain = TESTS / "architecture" / "test_tests.py"
    quick = _MarkOption("not slow and not aws")
    assert pytest_ignore_collect(slow, quick) is True
    assert pytest_ignore_collect(TESTS / "aws", quick) is True
    assert pytest_ignore_collect(on_aws, _MarkOption("not aws")) is True
    assert pytest_ignore_collect(plain, quick) is None
    assert pytest_ignore_collect(TESTS / "e2e", quick) is None
    for selects in ("", "slow", "not aws", "slow or not slow", "not slow or anyio", "aws or slow"):
        assert pytest_ignore_collect(slow, _MarkOption(selects)) is None, selects
    assert pytest_ignore_collect(slow, _MarkOption("not (slow or aws)")) is True
    assert pytest_ignore_collect(on_aws, _MarkOption("slow and not aws")) is True


def test_no_test_module_imports_another():
    """What several test modules use lives in a shared module or a conftest.py: a test module
    imported by another runs its module-level setup twice, its fixtures are collected twice,
    and moving or deleting one test breaks others."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = []
            if isinstance(node, ast.ImportFrom):
                named = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            if any(name.rsplit(".", 1)[-1].startswith("test_") for name in named):
                found.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert found == []
