"""What every `bunko` command shares: the --data-dir option and the settings it yields."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bunko.config import Settings

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data folder (env BUNKO_DATA_DIR).", show_default=False),
]


def command_settings(data_dir: Path | None, **overrides: object) -> Settings:
    """Settings from the environment, with the options the user gave on the command line."""
    values = {k: v for k, v in overrides.items() if v is not None}
    if data_dir is not None:
        values["data_dir"] = data_dir
    return Settings(**values)  # type: ignore[arg-type]
