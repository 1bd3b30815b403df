"""A Git repository made by a test with the `git` binary: files written, then committed
(the source tests' repositories, served or read in place)."""

from __future__ import annotations

import subprocess
from pathlib import Path


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir()
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str) -> str:
        env = {
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
            "HOME": str(self.root), "PATH": "/usr/bin:/bin",
        }  # fmt: skip
        done = subprocess.run(
            ["git", "-C", str(self.root), *args], capture_output=True, env=env, check=True
        )
        return done.stdout.decode().strip()

    def write(self, path: str, text: str) -> None:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "--quiet", "-m", message)
        return self.git("rev-parse", "HEAD")
