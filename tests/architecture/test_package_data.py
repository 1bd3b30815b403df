"""Every file the package reads at run time (the web app's files, the term tables, SQL
migrations) is named by pyproject's package-data, so an installed (non-editable) package has
them too: the Japanese and Chinese strings under web/static/js/lang were not."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "layers" / "bunko" / "bunko"
DATA_SUFFIXES = {".js", ".css", ".html", ".svg", ".sql", ".json", ".jsonl", ".gz"}


def test_every_data_file_of_the_package_is_in_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["bunko"]
    named = {p for pattern in patterns for p in PACKAGE.glob(pattern)}
    data = {
        p
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix in DATA_SUFFIXES and "__pycache__" not in p.parts
    }
    assert sorted(str(p.relative_to(PACKAGE)) for p in data - named) == []
