"""The order pytest-xdist hands test modules to its workers: longest first.

`make check` and `make test` run `--dist loadfile`: each worker takes whole modules (their
module fixtures, servers and models, are built once) from one queue. xdist queues modules by
how many tests they hold, so a module of three 10-second tests came last and ran alone while
the other worker had finished. Here the queue follows how long each module took
(`tests/durations.json`, written by `make durations`): the long modules start first and the
end of the run is made of short ones that fill both workers. A module the table does not
name (a new one) is taken for long and starts first. The tests of a module keep their order.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

TABLE = Path(__file__).resolve().parent / "durations.json"


def module_of(nodeid: str) -> str:
    """The unit `--dist loadfile` schedules: the file part of a test's id."""
    return nodeid.split("::", 1)[0]


def read_table(path: Path) -> dict[str, float]:
    """Seconds per module (its tests' setup, call and teardown) as last recorded."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def longest_first(items: list[pytest.Item], seconds: dict[str, float]) -> None:
    """Reorder `items` in place, modules by their recorded seconds, longest first. The sort is
    stable, so a module's tests stay together and in their order."""
    items.sort(key=lambda item: -seconds.get(module_of(item.nodeid), math.inf))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--durations-table",
        type=Path,
        default=TABLE,
        help="seconds per test module, the order xdist's workers take them in (longest first)",
    )
    parser.addoption(
        "--record-durations",
        action="store_true",
        help="write this run's seconds per module into the durations table",
    )


def pytest_configure(config: pytest.Config) -> None:
    # xdist's own reordering (by number of tests per module) would undo ours.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    # Recorded where the reports meet: the xdist controller, or the one process without it.
    if config.getoption("record_durations") and not hasattr(config, "workerinput"):
        table = config.getoption("durations_table")
        config.pluginmanager.register(_Recorder(table), "bunko-durations")


def order_for_workers(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker (each collects, then the controller queues modules in the order the
    workers collected them), longest first; a run without xdist keeps the files' order."""
    if hasattr(config, "workerinput"):
        longest_first(items, read_table(config.getoption("durations_table")))


class _Recorder:
    """Sums each module's reported seconds and merges them into the table at the end: the
    modules this run did not select keep what they had."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.spent: defaultdict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Every phase counts: a module's servers start in its first test's setup.
        self.spent[module_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self) -> None:
        table = read_table(self.path) | {m: round(s, 1) for m, s in self.spent.items()}
        text = json.dumps(dict(sorted(table.items())), indent=0)
        self.path.write_text(text + "\n", encoding="utf-8")
