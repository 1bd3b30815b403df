"""`bunko export LIBRARY FILE` and `bunko import FILE`: a library moved between data folders
and deployments in one portable archive (docs/owners.md, "Moving a library"). Both work on
either shape: the data folder, or a deployment's table, bucket and index with
BUNKO_BACKEND=aws."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from bunko.cli_options import DataDir, command_settings, library_label, library_workspace


@contextmanager
def _progress(label: str, total: int):
    from tqdm import tqdm

    with tqdm(total=total, desc=label, unit="doc", disable=total < 2) as bar:
        yield bar.update


def export_command(
    library: Annotated[
        str, typer.Argument(help="The library, by name (`default` for the drop folder's).")
    ],
    file: Annotated[Path, typer.Argument(help="The archive to write (a .zip).")],
    conversations: Annotated[
        bool, typer.Option("--conversations", help="Also the conversations kept in it.")
    ] = False,
    vectors: Annotated[
        bool,
        typer.Option(
            "--vectors",
            help="Also each passage's vector: an import into a library searched by the same "
            "model takes them instead of embedding again.",
        ),
    ] = False,
    current_only: Annotated[
        bool,
        typer.Option(
            "--current-only", help="Only each document's current revision, not its history."
        ),
    ] = False,
    data_dir: DataDir = None,
) -> None:
    """Write a library into one archive: originals, paths, metadata, categories, sources'
    settings (never a secret), members by username, settings; no vectors unless asked."""
    from bunko.bootstrap import build_services
    from bunko.bootstrap.moving import moving_parts
    from bunko.errors import BunkoError
    from bunko.services.moving import export_library

    services = build_services(command_settings(data_dir))
    try:
        workspace = library_workspace(services, library)
        name = library_label(services, workspace)
        parts = moving_parts(services)
        with _progress("exporting", services.library.count_documents(workspace)) as step:
            report = export_library(
                parts,
                workspace,
                file,
                conversations=conversations,
                vectors=vectors,
                revisions=not current_only,
                progress=step,
            )
    except BunkoError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    finally:
        services.close()
    for path in report.originals_missing:
        typer.echo(f"no original kept for {path}: exported without its bytes", err=True)
    more = f", {report.conversations} conversations" if conversations else ""
    more += f", {report.vectors} vectors" if vectors else ""
    more += f", {report.answers} marked or missing answers" if conversations else ""
    more += "" if current_only else f", {report.revisions} earlier revisions"
    typer.echo(
        f"exported library {name!r}: {report.documents} documents{more}, "
        f"{report.bytes:,} bytes, to {file} (archive {report.archive_id})"
    )


def import_command(
    file: Annotated[Path, typer.Argument(help="An archive `bunko export` wrote.")],
    library: Annotated[
        str | None,
        typer.Option(
            "--library",
            help="Into this library (made if none has the name); default: the archive's own.",
        ),
    ] = None,
    wait: Annotated[
        int, typer.Option(help="Seconds to wait for indexing (an import run again goes on).")
    ] = 3600,
    data_dir: DataDir = None,
) -> None:
    """Read an archive into a library here, each document embedded with this shape's model.
    Run twice, it adds nothing; stopped, run it again and it goes on."""
    from bunko.bootstrap import build_services
    from bunko.bootstrap.moving import moving_parts
    from bunko.errors import BunkoError
    from bunko.services.moving import ArchiveError, ImportProgress, import_library

    if not file.is_file():
        typer.echo(f"error: no file {file}", err=True)
        raise typer.Exit(2)
    services = build_services(command_settings(data_dir))
    bars: list = []

    def total(label: str, n: int) -> None:
        for bar in bars:
            bar.close()
        from tqdm import tqdm

        bars[:] = [tqdm(total=n, desc=label, unit="doc", disable=n < 2)]

    try:
        report = import_library(
            moving_parts(services),
            file,
            library=library,
            progress=ImportProgress(total=total, step=lambda n: bars[0].update(n)),
            wait_seconds=wait,
        )
    except ArchiveError as exc:
        typer.echo(f"error: {exc}\nnothing was imported", err=True)
        raise typer.Exit(2) from exc
    except BunkoError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    finally:
        for bar in bars:
            bar.close()
        services.close()
    made = " (made now)" if report.created else ""
    for path, why in sorted(report.skipped.items()):
        typer.echo(f"skipped {path}: {why}", err=True)
    for path, why in sorted(report.failed.items()):
        typer.echo(f"failed {path}: {why}", err=True)
    for username in report.members_missing:
        typer.echo(f"member {username!r} has no account here: not added", err=True)
    for name, why in report.sources_skipped.items():
        typer.echo(f"source {name!r} not added: {why}", err=True)
    if report.conversations_skipped:
        typer.echo(
            f"{report.conversations_skipped} conversations skipped: their owners have "
            "no account here",
            err=True,
        )
    typer.echo(
        f"imported into library {report.library_name!r}{made}: {report.added} added, "
        f"{report.unchanged} already here, {report.indexed} indexed, {len(report.failed)} "
        f"failed, {len(report.skipped)} skipped; members added: "
        f"{', '.join(report.members_added) or 'none'}; {report.conversations_added} "
        f"conversations (archive {report.archive_id})"
    )
    if report.revisions_added or report.answers_added:
        typer.echo(
            f"earlier revisions written: {report.revisions_added}; marked or missing "
            f"answers added: {report.answers_added}"
        )
    if report.vectors_reused or report.vectors_embedded:
        typer.echo(
            f"vectors taken from the archive: {report.vectors_reused} passages "
            f"({report.vectors_embedded} embedded here)"
        )
    elif report.vectors_unused:
        typer.echo(f"the archive's vectors were not used: {report.vectors_unused}")
    if report.items_edited or report.items_deleted:
        typer.echo(
            f"passages edited by hand restored: {report.items_edited} edited, "
            f"{report.items_deleted} deleted"
        )
    if report.pending:
        typer.echo(
            f"{len(report.pending)} documents still indexing: run the same import "
            "again to wait for them",
            err=True,
        )
        raise typer.Exit(3)
    raise typer.Exit(1 if report.failed or report.skipped else 0)
