"""Every benchmark the docs quote a figure from still imports: a refactor that renames what a
bench uses breaks it silently otherwise (bench_refine imported a `collect_records` that
fit_calibration no longer had), and the figure could not be rerun."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCHES = sorted(
    p.stem for p in (Path(__file__).parents[1] / "bench").glob("*.py") if p.stem != "__init__"
)


@pytest.mark.parametrize("name", BENCHES)
def test_the_bench_imports(name: str) -> None:
    importlib.import_module(f"tests.bench.{name}")
