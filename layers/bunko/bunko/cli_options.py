"""What every `bunko` command shares: the --data-dir option and the settings it yields."""

from __future__ import annotations

import time
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


def wait_with_progress(services, workspace_id: str, document_ids: list[str], label: str) -> None:
    """Wait until each document's indexing ends (completed or failed), with a progress bar.
    It watches the metadata store, not a queue, so it waits for this process's worker on a
    data folder and for the ingest function on AWS alike (SQS has no `join`)."""
    from tqdm import tqdm

    waiting, pause = set(document_ids), 0.05
    with tqdm(total=len(waiting), desc=label, unit="doc", disable=len(waiting) < 2) as bar:
        while waiting:
            for document_id in list(waiting):
                doc = services.library.find(workspace_id, document_id)
                if doc is None or doc.settled:  # deleted meanwhile, or indexed, or failed
                    waiting.discard(document_id)
                    bar.update(1)
            if waiting:
                time.sleep(pause)
                pause = min(pause * 1.5, 1.0)  # quick for a local worker, gentle on a table
