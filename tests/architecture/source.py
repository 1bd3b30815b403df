"""The package's source as the architecture tests read it: where it is, its modules, and its
doors (the modules a request enters through, and what starts them)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "bunko" / "bunko"
REPO = PACKAGE.parents[2]

# The doors a request enters by, and what composes or starts them, above them (the app
# holding REST and MCP, the Lambda entry, `bunko serve`, the CLI).
DOORS = ("bunko.http", "bunko.mcp", "bunko.drops")
ABOVE_DOORS = ("bunko.server_app", "bunko.lambda_entry", "bunko.embedded_server", "bunko.cli")


def modules(under: str = "") -> list[Path]:
    return sorted((PACKAGE / under).rglob("*.py"))


def door_modules() -> list[Path]:
    """The doors and what starts them (the CLI, `bunko serve`, the app, the Lambda entry)."""
    above = [PACKAGE / f"{name.removeprefix('bunko.')}.py" for name in ABOVE_DOORS]
    clis = sorted(PACKAGE.glob("cli*.py"))
    doors = [path for door in DOORS for path in modules(door.removeprefix("bunko."))]
    return sorted({*doors, *clis, *(p for p in above if p.exists())})
