"""GitCli: the Git port read with the `git` binary, as Bunko did before dulwich
(bunko/adapters/git_dulwich.py) served both shapes; kept here only as the reference
tests/bench/bench_git_repos.py measures dulwich against. Each connector keeps a bare copy
under `root/<key>.git`; a sync fetches its branch into it (only the new objects), and lists,
diffs and reads from there: nothing is checked out.

A remote is an https URL (checked by the outbound guard before each fetch; redirects not
followed) or a local path (where the shape allows local paths). Every other transport
(ssh, git://, ext::, file:// through a submodule) is refused by `protocol.allow=never`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from bunko.errors import UpstreamError, ValidationError
from bunko.ports.sources import GitChange

_CONFIG = (
    "protocol.allow=never",
    "protocol.https.allow=always",
    "protocol.http.allow=always",
    "protocol.file.allow=always",
    "http.followRedirects=false",
    "core.hooksPath=/dev/null",
    "credential.helper=",
)
_SAFE = [arg for setting in _CONFIG for arg in ("-c", setting)]
_TIMEOUT = 600


class GitCli:
    def __init__(
        self, root: Path, guard: Callable[[str, bool], object], *, local_paths: bool
    ) -> None:
        self.root = root
        self.guard = guard
        self.local_paths = local_paths

    def _dir(self, key: str) -> Path:
        if not key or "/" in key or key.startswith("."):
            raise ValidationError(f"not a source id: {key!r}")
        return self.root / f"{key}.git"

    def _git(self, key: str | None, *args: str, data: bytes | None = None) -> bytes:
        cmd = ["git", *_SAFE]
        if key is not None:
            cmd += ["--git-dir", str(self._dir(key))]
        env = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(self.root)}
        try:
            done = subprocess.run(
                [*cmd, *args], input=data, capture_output=True, timeout=_TIMEOUT, env=env
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UpstreamError(f"git {args[0]}: {exc}") from exc
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip()[-500:]
            raise UpstreamError(f"git {args[0]}: {message}")
        return done.stdout

    def _remote(self, remote: str, allow_private: bool) -> str:
        if remote.startswith(("https://", "http://")):
            self.guard(remote, allow_private)
            return remote
        if not self.local_paths:
            raise ValidationError("git: only https:// remotes here (local paths are refused)")
        path = Path(remote).expanduser()
        if not path.is_absolute() or not path.exists():
            raise ValidationError(f"git: {remote!r} is not an absolute path to a repository")
        return str(path)

    def fetch(
        self,
        key: str,
        remote: str,
        branch: str,
        *,
        allow_private: bool,
        max_seconds: float | None = None,
    ) -> str:
        where = self._remote(remote, allow_private)
        if not branch or branch.startswith("-") or ".." in branch:
            raise ValidationError(f"git: not a branch name: {branch!r}")
        gitdir = self._dir(key)
        if not gitdir.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            self._git(None, "init", "--bare", "--quiet", str(gitdir))
        ref = f"refs/bunko/{branch}"
        self._git(key, "fetch", "--quiet", "--no-tags", "--force", "--", where, f"{branch}:{ref}")
        return self._git(key, "rev-parse", "--verify", ref).decode().strip()

    def tree(self, key: str, commit: str) -> dict[str, str]:
        out = self._git(key, "ls-tree", "-r", "-z", "--full-tree", commit)
        files: dict[str, str] = {}
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            mode, kind, blob = meta.split()
            if kind == b"blob" and mode != b"120000":  # symlinks are not files
                files[path.decode("utf-8", "surrogateescape")] = blob.decode()
        return files

    def sizes(self, key: str, blobs: Sequence[str]) -> dict[str, int]:
        if not blobs:
            return {}
        out = self._git(
            key, "cat-file", "--batch-check", data="".join(b + "\n" for b in blobs).encode()
        )
        return {line.split()[0].decode(): int(line.split()[2]) for line in out.splitlines()}

    def diff(self, key: str, old: str, new: str) -> list[GitChange]:
        try:
            self._git(key, "cat-file", "-e", f"{old}^{{commit}}")
        except UpstreamError:
            return []  # the old commit is gone (a force-push, a fresh copy): no renames told
        out = self._git(key, "diff-tree", "-r", "-M", "-z", "--name-status", old, new)
        fields = [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0") if f]
        changes: list[GitChange] = []
        i = 0
        while i < len(fields):
            status = fields[i][0]
            if status in "RC":
                changes.append(GitChange(status, fields[i + 2], fields[i + 1]))
                i += 3
            else:
                changes.append(GitChange(status, fields[i + 1]))
                i += 2
        return changes

    def read(self, key: str, blobs: Sequence[str]) -> Iterator[tuple[str, bytes]]:
        if not blobs:
            return
        out = self._git(key, "cat-file", "--batch", data="".join(b + "\n" for b in blobs).encode())
        at = 0
        for blob in blobs:
            end = out.index(b"\n", at)
            header = out[at:end].split()
            size = int(header[2])
            yield blob, out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1

    def forget(self, key: str) -> None:
        shutil.rmtree(self._dir(key), ignore_errors=True)
