"""`bunko missing`: what a library could not answer, on the machine (docs/answers.md), read
as the operator reads it: any library's, by name."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Annotated

import typer

from bunko.cli_options import DataDir, LibraryName, command_settings, library_workspace


def missing(
    library: LibraryName = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many groups.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Print the questions a library refused or answered badly, grouped by similar question,
    the most asked first, with the passages it had nearest. With BUNKO_BACKEND=aws it reads
    the deployment's table."""
    from bunko.bootstrap import build_services
    from bunko.services.accounts import LOCAL_PRINCIPAL

    services = build_services(command_settings(data_dir))
    try:
        if services.missing is None:
            typer.echo("error: this backend keeps no answers (no accounts)", err=True)
            raise typer.Exit(2)
        workspace = library_workspace(services, library)
        # the operator, as the library's owner: its own missing list
        operator = replace(LOCAL_PRINCIPAL, workspace_id=workspace)
        groups = services.missing.groups(operator, limit=limit)
    finally:
        services.close()
    for group in groups:
        if as_json:
            typer.echo(
                json.dumps(
                    {**asdict(group), "last_at": group.last_at.isoformat()}, ensure_ascii=False
                )
            )
            continue
        weeks = ", ".join(f"{week}: {n}" for week, n in group.weeks.items())
        typer.echo(
            f"{group.count:>4}  {group.question}  ({group.refused} refused, "
            f"{group.marked_down} marked down; {weeks})"
        )
        for other in group.questions[1:]:
            typer.echo(f"        also: {other}")
        for passage in group.nearest:
            typer.echo(f"        nearest: {passage['fileName']} ({passage['score']:.2f})")
    typer.echo(f"{len(groups)} groups", err=True)
