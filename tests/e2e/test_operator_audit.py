"""The operator's commands on the machine record themselves on the audit trail (issue 50,
point 1), as `bunko export` does: `bunko user create|promote|demote|reset-password` and
`bunko apikey create|revoke`, each one event, user `operator`, door `cli`, the object's id
and never the password or the key's secret; a refused command leaves a refused or failed
event with its status. Read back with `bunko audit --json`, a real process over the same
data folder (tests/aws/test_cli_on_aws.py runs the user commands on the AWS shape)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from bunko.cli import app as cli
from tests.e2e.cli_harness import run

PASSWORD = "correct horse battery staple"
FRESH = "a brand new password, this one"


def _bunko(runner: CliRunner, data, *args: str, password: str = PASSWORD):
    return runner.invoke(
        cli, [*args, "--data-dir", str(data)], env={"BUNKO_NEW_USER_PASSWORD": password}
    )


def _id_in(created: str) -> str:
    """The new user's id in `created user ada (<id>)`."""
    assert created.startswith("created "), created
    return created.strip().rsplit("(", 1)[1].rstrip(")")


def test_the_operators_commands_are_on_the_trail(tmp_path):
    data, runner = tmp_path / "data", CliRunner()
    made = _bunko(runner, data, "user", "create", "chief", "--admin")
    assert made.exit_code == 0, made.output
    chief = _id_in(made.output)
    ada = _id_in(_bunko(runner, data, "user", "create", "ada").output)
    taken = _bunko(runner, data, "user", "create", "ada")
    assert taken.exit_code == 1 and "taken" in taken.output
    assert _bunko(runner, data, "user", "promote", "ada").exit_code == 0
    assert _bunko(runner, data, "user", "demote", "ada").exit_code == 0
    last = _bunko(runner, data, "user", "demote", "chief")
    assert last.exit_code == 1 and "last admin" in last.output
    nobody = _bunko(runner, data, "user", "promote", "nobody")
    assert nobody.exit_code == 1 and "no user named 'nobody'" in nobody.output
    reset = _bunko(runner, data, "user", "reset-password", "ada", password=FRESH)
    assert reset.exit_code == 0, reset.output
    key = _bunko(runner, data, "apikey", "create", "--scopes", "kb:read", "--json")
    assert key.exit_code == 0, key.output
    made_key = json.loads(key.stdout.strip().splitlines()[-1])
    assert _bunko(runner, data, "apikey", "revoke", made_key["id"]).exit_code == 0
    again = _bunko(runner, data, "apikey", "revoke", "no-such-key")
    assert again.exit_code == 1

    printed = run(["audit", "--json", "--limit", "1000"], data)
    events = [json.loads(line) for line in printed.stdout.splitlines()][::-1]  # oldest first
    assert [(e["action"], e["outcome"], e["status"], e["object_id"]) for e in events] == [
        ("cli:user-create", "ok", 200, chief),
        ("cli:user-create", "ok", 200, ada),
        ("cli:user-create", "failed", 409, None),
        ("cli:user-promote", "ok", 200, ada),
        ("cli:user-demote", "ok", 200, ada),
        ("cli:user-demote", "failed", 409, chief),
        ("cli:user-promote", "refused", 404, None),
        ("cli:user-reset-password", "ok", 200, ada),
        ("cli:apikey-create", "ok", 200, made_key["id"]),
        ("cli:apikey-revoke", "ok", 200, made_key["id"]),
        ("cli:apikey-revoke", "refused", 404, "no-such-key"),
    ]  # fmt: skip
    assert {(e["user_id"], e["door"], e["api_key_id"]) for e in events} == {
        ("operator", "cli", None)
    }
    assert {e["object_kind"] for e in events} == {"user", "key"}
    assert events[-2]["library_id"] == made_key["workspace_id"]
    # never a password or the key's secret
    assert PASSWORD not in printed.stdout and FRESH not in printed.stdout
    assert made_key["key"] not in printed.stdout
