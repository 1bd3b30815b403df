"""What every `bunko` command shares: the --data-dir option and the settings it yields."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
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


class OperatorAction:
    """What an operator's command learns as it runs: the object it acts on, once known."""

    def __init__(self) -> None:
        self.object_id: str | None = None
        self.library_id: str | None = None


@contextmanager
def operator_action(audit, action: str, *, object_kind: str) -> Iterator[OperatorAction]:
    """Record a command the machine's operator ran on the audit trail (`audit`: the server's
    AuditTrail, or None where nothing is recorded), as `bunko export` does: user `operator`,
    door `cli`, the object's id and never a secret; `ok` 200, or the status its refusal
    would answer over REST (a taken name 409, an unknown user 404), or `failed` 500."""
    from bunko.asgi.errors import status_for
    from bunko.domain.accounts import OPERATOR
    from bunko.domain.audit import AuditEvent, outcome_of
    from bunko.errors import BunkoError

    act = OperatorAction()
    status = 500
    try:
        yield act
        status = 200
    except BunkoError as exc:
        status = status_for(exc)
        raise
    finally:
        if audit is not None:
            audit.record(
                AuditEvent(
                    action=action,
                    outcome=outcome_of(status),
                    status=status,
                    user_id=OPERATOR,
                    library_id=act.library_id,
                    object_kind=object_kind,
                    object_id=act.object_id,
                    door="cli",
                )
            )
