"""CLI commands for agents: `bunko mcp` (stdio server) and `bunko apikey create|list|revoke`.

Registered on the main `bunko` app by `bunko.cli`; heavy imports stay inside the commands.
Like `bunko serve`, `bunko mcp` starts a door's server (bunko.mcp.stdio); no door imports
the CLI.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from bunko.cli_options import (
    DataDir,
    LibraryName,
    command_settings,
    library_workspace,
    operator_action,
)

apikey_app = typer.Typer(help="Create, list and revoke API keys for agents.", no_args_is_help=True)


def mcp_command(
    data_dir: DataDir = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            envvar="BUNKO_API_KEY",
            help="Act as this key (its workspace and scopes); default: the local user.",
            show_default=False,
        ),
    ] = None,
    profile: Annotated[
        str | None, typer.Option(help="core | full (env BUNKO_MCP_PROFILE).", show_default=False)
    ] = None,
) -> None:
    """Run the MCP server over stdio (for Claude Desktop and other local agents)."""
    from bunko.errors import AuthenticationError
    from bunko.mcp.stdio import run_stdio

    # stdout is the protocol: every log line goes to stderr.
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    settings = command_settings(data_dir, mcp_profile=profile)
    try:
        run_stdio(settings, api_key=api_key)
    except AuthenticationError as exc:
        typer.echo(f"bunko mcp: {exc}", err=True)
        raise typer.Exit(2) from exc


@apikey_app.command("create")
def create_key(
    scopes: Annotated[
        str, typer.Option(help="Comma-separated: kb:read, kb:write, agent:research, admin.")
    ],
    library: LibraryName = None,
    workspace: Annotated[
        str | None, typer.Option(help="Or the workspace id of an existing library.")
    ] = None,
    name: Annotated[str, typer.Option(help="A label to recognise the key by.")] = "",
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Create a key and print it. It is stored hashed: copy it now, it is never shown again."""
    from bunko.errors import BunkoError

    services = _keys_services(data_dir)
    if workspace is None:
        workspace = library_workspace(services, library)
    elif not services.library.has_library(workspace):
        services.close()  # a mistyped id would make a key to an empty library nobody sees
        typer.echo(f"error: no workspace {workspace!r}: name the library with --library", err=True)
        raise typer.Exit(2)
    try:
        with operator_action(services.audit, "cli:apikey-create", object_kind="key") as act:
            act.library_id = workspace
            key, secret = services.apikeys.create(workspace_id=workspace, scopes=scopes, name=name)
            act.object_id = key.id  # the key's id, never its secret
    except BunkoError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    finally:
        services.close()
    if as_json:
        record = {"key": secret, "id": key.id, "workspace_id": key.workspace_id}
        typer.echo(json.dumps(record | {"scopes": sorted(key.scopes), "name": key.name}))
    else:
        typer.echo(secret)
        typer.echo(
            f"id {key.id} · workspace {key.workspace_id} · scopes {' '.join(sorted(key.scopes))}",
            err=True,
        )


@apikey_app.command("list")
def list_keys(
    workspace: Annotated[str | None, typer.Option(help="Only this workspace.")] = None,
    data_dir: DataDir = None,
) -> None:
    """List keys (their id, prefix, workspace, scopes; never the key)."""
    services = _keys_services(data_dir)
    try:
        for key in services.apikeys.list_keys(workspace):
            state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
            typer.echo(
                f"{key.id}  {key.prefix}…  {key.workspace_id}  {','.join(sorted(key.scopes))}  "
                f"{state}  {key.name}"
            )
    finally:
        services.close()


@apikey_app.command("revoke")
def revoke_key(
    key_id: Annotated[str, typer.Argument(help="The key's id (from `bunko apikey list`).")],
    data_dir: DataDir = None,
) -> None:
    """Revoke a key: it stops working at once."""
    from bunko.errors import NotFoundError

    services = _keys_services(data_dir)
    try:
        with operator_action(services.audit, "cli:apikey-revoke", object_kind="key") as act:
            act.object_id = key_id
            act.library_id = services.apikeys.revoke(key_id).workspace_id
    except NotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    finally:
        services.close()
    typer.echo(f"revoked {key_id}")


def _keys_services(data_dir: Path | None):
    from bunko.bootstrap import build_services

    # Keys need no model: skip loading one.
    services = build_services(command_settings(data_dir, embedder="none"))
    if services.apikeys is None:
        services.close()
        typer.echo("error: API keys are stored by the local backend only", err=True)
        raise typer.Exit(2)
    return services
