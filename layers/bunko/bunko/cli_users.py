"""`bunko user create|list|promote|demote|reset-password`: accounts of the REST API, managed
from the machine itself (an admin without BUNKO_ADMIN_USERNAME / BUNKO_ADMIN_PASSWORD or the
first sign-up; a lost password).
With BUNKO_BACKEND=aws they manage a deployment's users in its table (docs/aws.md)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from bunko.cli_options import DataDir, command_settings, operator_action

user_app = typer.Typer(help="Manage the REST API's users.", no_args_is_help=True)


def _auth(data_dir: Path | None):
    """The auth service over the server's stores, with the audit trail its changes are
    recorded on (the operator's `cli:user-*` events)."""
    settings = command_settings(data_dir)
    if settings.backend == "aws":
        from bunko.bootstrap.aws import open_aws_auth

        return open_aws_auth(settings)
    from bunko.bootstrap.local import open_local_auth

    return open_local_auth(settings)


@contextmanager
def _reaching_the_deployment() -> Iterator[None]:
    """An AWS error (no such table, no credentials, access denied) as one line naming the
    settings to check, not a traceback."""
    try:
        yield
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in ("botocore", "boto3"):
            raise
        typer.echo(
            f"error: {exc}\n(check BUNKO_TABLE_NAME and BUNKO_BUCKET against the stack's "
            "outputs TableName and BucketName, AWS_REGION, and your AWS credentials)",
            err=True,
        )
        raise typer.Exit(1) from exc


@contextmanager
def _changing_users() -> Iterator[None]:
    """What a command that changes users shares: AWS errors as one line, and a refusal
    (taken name, last admin, short password) as `error: …` with exit status 1."""
    from bunko.errors import BunkoError

    try:
        with _reaching_the_deployment():
            yield
    except BunkoError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc


@user_app.command("create")
def create(
    username: Annotated[str, typer.Argument(help="The new user's name.")],
    password: Annotated[
        str,
        typer.Option(
            prompt=True,
            hide_input=True,
            confirmation_prompt=True,
            envvar="BUNKO_NEW_USER_PASSWORD",
            help="Asked for when not given (or set BUNKO_NEW_USER_PASSWORD).",
        ),
    ],
    admin: Annotated[bool, typer.Option("--admin", help="Make the user an admin.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Create a user (with a personal workspace); --admin for an administrator."""
    with _changing_users():
        auth = _auth(data_dir)
        with operator_action(auth.audit, "cli:user-create", object_kind="user") as act:
            user = auth.create_user(username, password, is_admin=admin)
            act.object_id, act.library_id = user.id, user.workspace_id
    typer.echo(f"created {'admin' if user.is_admin else 'user'} {user.username} ({user.id})")


@user_app.command("list")
def list_users(data_dir: DataDir = None) -> None:
    """Every user, oldest first."""
    with _reaching_the_deployment():
        users = _auth(data_dir).users.list_users()
    for user in users:
        typer.echo(f"{user.id}  {user.username}{'  (admin)' if user.is_admin else ''}")


def _named(auth, username: str):
    from bunko.errors import NotFoundError

    user = auth.users.get_user_by_username(username)
    if user is None:  # said by _changing_users, and recorded as refused (404)
        raise NotFoundError(f"no user named {username!r} (`bunko user list` shows them)")
    return user


def _set_admin(username: str, is_admin: bool, data_dir: Path | None) -> None:
    with _changing_users():
        auth = _auth(data_dir)
        action = "cli:user-promote" if is_admin else "cli:user-demote"
        with operator_action(auth.audit, action, object_kind="user") as act:
            named = _named(auth, username)
            act.object_id, act.library_id = named.id, named.workspace_id
            user = auth.set_admin(named.id, is_admin)
    typer.echo(f"{user.username} is {'an admin' if user.is_admin else 'a user'} now")


@user_app.command("promote")
def promote(
    username: Annotated[str, typer.Argument(help="The user to make an admin.")],
    data_dir: DataDir = None,
) -> None:
    """Make a user an admin."""
    _set_admin(username, True, data_dir)


@user_app.command("demote")
def demote(
    username: Annotated[str, typer.Argument(help="The admin to make a plain user.")],
    data_dir: DataDir = None,
) -> None:
    """Make an admin a plain user (never the last admin)."""
    _set_admin(username, False, data_dir)


@user_app.command("reset-password")
def reset_password(
    username: Annotated[str, typer.Argument(help="The user who lost their password.")],
    password: Annotated[
        str,
        typer.Option(
            prompt="New password",
            hide_input=True,
            confirmation_prompt=True,
            envvar="BUNKO_NEW_USER_PASSWORD",
            help="Asked for when not given (or set BUNKO_NEW_USER_PASSWORD).",
        ),
    ],
    data_dir: DataDir = None,
) -> None:
    """Set a new password; every session the user had ends."""
    with _changing_users():
        auth = _auth(data_dir)
        with operator_action(auth.audit, "cli:user-reset-password", object_kind="user") as act:
            named = _named(auth, username)  # the user's id is recorded, never the password
            act.object_id, act.library_id = named.id, named.workspace_id
            user = auth.reset_password(named.id, password)
    typer.echo(f"password of {user.username} reset; their sessions have ended")
