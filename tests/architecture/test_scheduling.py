"""xdist's workers take the longest test modules first (tests/scheduling.py), and a run
records each module's seconds for the next one. Run as a real pytest with a real xdist
worker over a small tree of modules, with the hooks wired as tests/conftest.py wires them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """
from tests.scheduling import order_for_workers, pytest_addoption, pytest_configure


def pytest_collection_modifyitems(config, items):
    order_for_workers(config, items)
"""

# Each test writes its id where it runs, so the file holds the order the worker ran them.
MODULE = """
import os
import time

import pytest


@pytest.mark.parametrize("n", range({count}))
def test_runs(n):
    time.sleep({sleep})
    with open(os.environ["RAN"], "a") as ran:
        ran.write(os.environ["PYTEST_CURRENT_TEST"].split(" ")[0] + "\\n")
"""


def test_the_longest_modules_go_first_and_a_run_records_what_each_took(tmp_path: Path):
    # By number of tests (xdist's own order) b, c, d, a; by the files' names a, b, c, d.
    tests = {"test_a.py": 1, "test_b.py": 3, "test_c.py": 2, "test_d.py": 2}
    for name, count in tests.items():
        sleep = 0.3 if name == "test_a.py" else 0
        (tmp_path / name).write_text(MODULE.format(count=count, sleep=sleep))
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    table = tmp_path / "durations.json"
    # c is new to the table: taken for long. gone.py was deleted since it was recorded.
    table.write_text(
        json.dumps({"test_a.py": 30.0, "test_b.py": 1.0, "test_d.py": 5.0, "gone.py": 2.0})
    )
    ran = tmp_path / "ran.txt"
    env = os.environ | {
        "PYTHONPATH": str(REPO_ROOT),
        "RAN": str(ran),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # only xdist: the tree needs no other plugin
    }
    command = [sys.executable, "-m", "pytest", "-q", "-p", "xdist", "-p", "no:cacheprovider"]
    options = [
        "-n",
        "1",
        "--dist",
        "loadfile",
        "--durations-table",
        str(table),
        "--record-durations",
    ]
    done = subprocess.run(command + options, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr

    order = [line.split("::")[0] for line in ran.read_text().splitlines()]
    assert order == ["test_c.py"] * 2 + ["test_a.py"] + ["test_d.py"] * 2 + ["test_b.py"] * 3
    assert ran.read_text().splitlines()[:2] == [
        "test_c.py::test_runs[0]",
        "test_c.py::test_runs[1]",
    ]

    recorded = json.loads(table.read_text())
    assert set(recorded) == set(tests) | {"gone.py"}
    assert recorded["gone.py"] == 2.0  # a module this run did not select keeps its entry
    assert recorded["test_a.py"] >= 0.3  # this run's seconds replaced the 30 it held
    assert recorded["test_a.py"] < 30.0
