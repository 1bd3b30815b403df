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


LibraryName = Annotated[
    str | None,
    typer.Option(
        "--library",
        help="The library, by name (a shared library's, or a user's for their own); "
        "default: the one the drop folder fills (`default`, unless an admin chose another).",
    ),
]


def library_workspace(services, name: str | None) -> str:
    """The workspace `--library NAME` names (services: built by bootstrap); exits with a
    message naming what exists when nothing is called that."""
    from bunko.domain import DEFAULT_WORKSPACE_ID
    from bunko.errors import NotFoundError

    if not name:
        if services.accounts is None:
            return DEFAULT_WORKSPACE_ID
        return services.accounts.workspace_settings.drop_library(DEFAULT_WORKSPACE_ID)
    if services.accounts is None:
        typer.echo("error: libraries need user accounts, which this backend lacks", err=True)
        raise typer.Exit(2)
    try:
        return services.accounts.libraries.workspace_named(name)
    except NotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def library_label(services, workspace_id: str) -> str:
    """How the CLI names the library it worked in: `bunko search` says which one it searched."""
    from bunko.domain import DEFAULT_WORKSPACE_ID

    if services.accounts is None:
        return "default" if workspace_id == DEFAULT_WORKSPACE_ID else workspace_id
    return services.accounts.libraries.name_of(workspace_id)


def wait_with_progress(services, total: int, label: str) -> None:
    """Wait for the ingest queue to empty, with a progress bar of `total` documents."""
    from tqdm import tqdm

    with tqdm(total=total, desc=label, unit="doc", disable=total < 2) as bar:
        done = 0
        while True:
            idle = services.ingest.wait_for_queue(timeout=0.5)
            now = total - min(total, services.status.queue_depth())
            bar.update(now - done)
            done = now
            if idle:
                return
