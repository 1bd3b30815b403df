"""Load the Lambda handler modules from functions/ (they are not a package: each folder is
one function's code asset) and the sample events from events/."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parents[2]


def load_function(name: str, module: str = "handler") -> ModuleType:
    path = REPO_ROOT / "functions" / name / f"{module}.py"
    qualified = f"bunko_function_{name}_{module}"
    spec = importlib.util.spec_from_file_location(qualified, path)
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def load_event(name: str) -> dict:
    return json.loads((REPO_ROOT / "events" / name).read_text(encoding="utf-8"))
