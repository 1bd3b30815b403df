"""`bunko source add|sync|list|schedule|remove`: a library's connectors (docs/sources.md)."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Annotated

import typer

from bunko.cli_options import (
    DataDir,
    LibraryName,
    command_settings,
    library_label,
    library_workspace,
    wait_with_progress,
)

source_app = typer.Typer(
    help="Connectors that keep a library in step with a website, a Git repository, Confluence, "
    "SharePoint/OneDrive or Google Drive.",
    no_args_is_help=True,
)

SourceName = Annotated[str, typer.Argument(help="The source's name in the library.")]
# A credential never comes on the command line (argv is in `ps` and shell history).
CredentialEnv = Annotated[
    str | None,
    typer.Option(
        "--credential-env",
        metavar="VAR",
        help="Read the source's credential from this environment variable.",
    ),
]
CredentialStdin = Annotated[
    bool,
    typer.Option("--credential-stdin", help="Read the source's credential from standard input."),
]


def _read_credential(env: str | None, stdin: bool) -> str | None:
    """The credential from the environment variable named or from standard input."""
    if env is not None and stdin:
        raise typer.BadParameter("give --credential-env or --credential-stdin, not both")
    if env is not None:
        value = os.environ.get(env)
        if not value:
            raise typer.BadParameter(f"the environment variable {env} is not set")
        return value
    if stdin:
        value = sys.stdin.read()
        if not value.strip():
            raise typer.BadParameter("nothing came on standard input")
        return value
    return None


def _open(data_dir, library):
    from bunko.bootstrap import build_services

    services = build_services(command_settings(data_dir))
    if services.sources is None:
        typer.echo("error: this backend keeps no sources", err=True)
        raise typer.Exit(2)
    return services, library_workspace(services, library)


def _fail(services, exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    services.close()
    raise typer.Exit(1) from exc


@source_app.command("add")
def add(
    kind: Annotated[str, typer.Argument(help="web, git, confluence, sharepoint or gdrive")],
    name: Annotated[str, typer.Option("--name", help="The source's name in the library.")],
    url: Annotated[
        str | None,
        typer.Option(
            help="web: a start URL or a sitemap; git: an https URL; confluence: the site's URL; "
            "sharepoint, gdrive: the API's root (default Microsoft Graph's, Google's)."
        ),
    ] = None,
    path: Annotated[str | None, typer.Option(help="git: a repository on this machine.")] = None,
    branch: Annotated[str | None, typer.Option(help="git: the branch (default main).")] = None,
    include: Annotated[
        list[str] | None, typer.Option(help="git: a glob of files to take (repeatable).")
    ] = None,
    exclude: Annotated[
        list[str] | None, typer.Option(help="git: a glob of files to leave (repeatable).")
    ] = None,
    space: Annotated[str | None, typer.Option(help="confluence: the space's key.")] = None,
    edition: Annotated[
        str | None,
        typer.Option(help="confluence: cloud or datacenter (default: cloud for *.atlassian.net)."),
    ] = None,
    attachments: Annotated[
        bool | None,
        typer.Option(help="confluence: take pages' attachments too (default yes)."),
    ] = None,
    drive_id: Annotated[
        str | None, typer.Option(help="sharepoint: the drive's (document library's) id.")
    ] = None,
    item_id: Annotated[
        str | None, typer.Option(help="sharepoint: the folder's item id (default: the root).")
    ] = None,
    folder_id: Annotated[str | None, typer.Option(help="gdrive: the folder's id.")] = None,
    shared_drive_id: Annotated[
        str | None, typer.Option(help="gdrive: the shared drive the folder is in.")
    ] = None,
    export: Annotated[
        str | None, typer.Option(help="gdrive: Google Docs as text, markdown or docx.")
    ] = None,
    max_pages: Annotated[int | None, typer.Option(help="web, confluence: pages per sync.")] = None,
    max_files: Annotated[
        int | None, typer.Option(help="git, sharepoint, gdrive: files read per sync.")
    ] = None,
    max_bytes: Annotated[int | None, typer.Option(help="Bytes read per sync.")] = None,
    max_seconds: Annotated[int | None, typer.Option(help="Seconds per sync.")] = None,
    folder: Annotated[
        str | None, typer.Option(help="Where its documents go (default: its name).")
    ] = None,
    every: Annotated[
        str, typer.Option(help="Sync by itself every 30m, 6h, 1d…, or off (on demand only).")
    ] = "6h",
    paused: Annotated[bool, typer.Option("--paused", help="Added paused.")] = False,
    library: LibraryName = None,
    data_dir: DataDir = None,
    credential_env: CredentialEnv = None,
    credential_stdin: CredentialStdin = False,
) -> None:
    """Add a source to a library (then `bunko source sync NAME`)."""
    from bunko.errors import BunkoError

    credential = _read_credential(credential_env, credential_stdin)

    if kind in ("sharepoint", "gdrive"):  # their --url has a default: the service's root
        if path is not None:
            raise typer.BadParameter(f"a {kind} source takes no --path")
    elif (url is None) == (path is None) or (kind != "git" and path is not None):
        raise typer.BadParameter("give --url (web, git, confluence) or --path (git)")
    given = {
        "url": url or path,
        "branch": branch,
        "space": space,
        "edition": edition,
        "attachments": attachments,
        "drive_id": drive_id,
        "item_id": item_id,
        "folder_id": folder_id,
        "shared_drive_id": shared_drive_id,
        "export": export,
        "include": include or None,
        "exclude": exclude or None,
        "max_pages": max_pages,
        "max_files": max_files,
        "max_bytes": max_bytes,
        "max_seconds": max_seconds,
        "folder": folder,
    }
    services, workspace = _open(data_dir, library)
    try:
        record = services.sources.add(
            workspace,
            kind,
            name,
            {k: v for k, v in given.items() if v is not None},
            operator=True,  # the machine's own operator
            credential=credential,
            every=every,
            paused=paused,
        )
    except BunkoError as exc:
        _fail(services, exc)
    typer.echo(
        f"added {record.kind} source {record.name!r} to library "
        f"{library_label(services, workspace)!r}; its documents go under {record.folder}/"
    )
    services.close()


@source_app.command("sync")
def sync(
    name: SourceName,
    library: LibraryName = None,
    data_dir: DataDir = None,
    wait: Annotated[bool, typer.Option(help="Wait until what changed is indexed.")] = True,
) -> None:
    """Sync a source now and print what changed."""
    from bunko.errors import BunkoError

    services, workspace = _open(data_dir, library)
    try:
        report = services.sources.sync(workspace, name)
    except BunkoError as exc:
        _fail(services, exc)
    if report.failed:
        typer.echo(f"sync failed, nothing deleted: {report.failed}", err=True)
        services.close()
        raise typer.Exit(1)
    for label, paths in (("added", report.added), ("changed", report.changed)):
        for p in paths:
            typer.echo(f"{label} {p}")
    for old, new in report.renamed:
        typer.echo(f"renamed {old} -> {new}")
    for p in report.deleted:
        typer.echo(f"deleted {p}")
    for where, why in report.errors.items():
        typer.echo(f"error {where}: {why}", err=True)
    if wait:
        written = [services.library.at(workspace, p) for p in report.added + report.changed]
        ids = [doc.id for doc in written if doc is not None]
        wait_with_progress(services, workspace, ids, "indexing")
    more = "" if report.complete else f"; stopped by {report.stopped_by}, the next sync goes on"
    typer.echo(
        f"{len(report.added)} added, {len(report.changed)} changed, {len(report.renamed)} "
        f"renamed, {len(report.deleted)} deleted, {report.unchanged} unchanged, "
        f"{len(report.errors)} errors; {report.requests} requests, {report.fetched} fetched, "
        f"{report.seconds:.1f} s{more}"
    )
    services.close()


@source_app.command("list")
def list_sources(
    library: LibraryName = None,
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """A library's sources, with their last sync."""
    services, workspace = _open(data_dir, library)
    records = services.sources.list(workspace)
    if as_json:
        shown = [{**r.to_dict(), "next_sync_at": r.next_sync_at} for r in records]
        typer.echo(json.dumps(shown, indent=2, ensure_ascii=False))
    for r in [] if as_json else records:
        last = r.last_sync
        when = "never synced"
        if last:
            when = (
                f"last sync: {last['added']} added, {last['changed']} changed, "
                f"{last['deleted']} deleted, {last['error_count']} errors"
                + (f" (failed: {last['failed']})" if last.get("failed") else "")
            )
        kept = "\tcredential kept" if r.has_credential else ""
        typer.echo(f"{r.name}\t{r.kind}\t{r.settings['url']}\t{when}\t{_next(r)}{kept}")
    services.close()


@source_app.command("credential")
def credential(
    name: SourceName,
    library: LibraryName = None,
    data_dir: DataDir = None,
    credential_env: CredentialEnv = None,
    credential_stdin: CredentialStdin = False,
    remove: Annotated[bool, typer.Option("--remove", help="Remove its credential.")] = False,
) -> None:
    """Replace a source's credential (from an environment variable or standard input), or
    remove it."""
    from bunko.errors import BunkoError

    given = _read_credential(credential_env, credential_stdin)
    if (given is None) != remove:
        raise typer.BadParameter("give --credential-env VAR, --credential-stdin or --remove")
    services, workspace = _open(data_dir, library)
    try:
        services.sources.set_credential(workspace, name, given)
    except BunkoError as exc:
        _fail(services, exc)
    typer.echo(f"source {name!r}: credential {'removed' if remove else 'replaced'}")
    services.close()


def _next(record) -> str:
    from bunko.services.sources import format_every

    if record.paused:
        return "paused"
    if record.every is None:
        return "on demand only"
    at = record.next_sync_at
    when = "now" if at <= time.time() else time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
    return f"every {format_every(record.every)}, next {when}"


@source_app.command("schedule")
def schedule(
    name: SourceName,
    every: Annotated[
        str | None, typer.Option(help="Sync by itself every 30m, 6h, 1d…, or off.")
    ] = None,
    pause: Annotated[
        bool | None, typer.Option("--pause/--resume", help="Pause or resume it.")
    ] = None,
    library: LibraryName = None,
    data_dir: DataDir = None,
) -> None:
    """Change when a source syncs by itself (`bunko serve` runs what is due)."""
    from bunko.errors import BunkoError

    services, workspace = _open(data_dir, library)
    changes: dict = {"paused": pause}
    if every is not None:
        changes["every"] = every
    try:
        record = services.sources.set_schedule(workspace, name, **changes)
    except BunkoError as exc:
        _fail(services, exc)
    typer.echo(f"{record.name}: {_next(record)}")
    services.close()


@source_app.command("remove")
def remove(
    name: SourceName,
    library: LibraryName = None,
    data_dir: DataDir = None,
    keep_documents: Annotated[
        bool, typer.Option(help="Keep the documents it put in the library.")
    ] = False,
) -> None:
    """Remove a source, and its documents unless --keep-documents."""
    from bunko.errors import BunkoError

    services, workspace = _open(data_dir, library)
    try:
        deleted = services.sources.remove(workspace, name, keep_documents=keep_documents)
    except BunkoError as exc:
        _fail(services, exc)
    kept = "its documents kept" if keep_documents else f"{deleted} documents deleted"
    typer.echo(f"removed source {name!r}; {kept}")
    services.close()
