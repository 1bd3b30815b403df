"""`bunko mcp` over stdio as the official MCP client spawns it, and API keys made with
`bunko apikey create`: real child processes on a data folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import StdioServerParameters

from bunko.domain import DEFAULT_WORKSPACE_ID


def stdio_env(**extra: str) -> dict[str, str]:
    env = {"BUNKO_EMBEDDER": "none", **extra}
    if "PYTHONPATH" in os.environ:  # keep the test run's import path for the child
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def bunko_mcp(data_dir: Path, *args: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "bunko.cli", "mcp", "--data-dir", str(data_dir), *args],
        env=stdio_env(**env),
        cwd=str(data_dir.parent),  # no stray .env from the repository
    )


def run_apikey_create(data_dir: Path, scopes: str, *where: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bunko.cli", "apikey", "create", "--scopes", scopes, *where,
         "--data-dir", str(data_dir), "--json"],
        capture_output=True, text=True, env={**os.environ, **stdio_env()}, cwd=data_dir.parent,
        timeout=120, check=False,
    )  # fmt: skip


def create_key(data_dir: Path, scopes: str, library: str) -> str:
    done = run_apikey_create(data_dir, scopes, "--library", library)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["workspace_id"] == DEFAULT_WORKSPACE_ID
    assert record["scopes"] == sorted(scopes.split(","))
    return record["key"]
