"""DulwichRepos: a Git connector's repositories, read with dulwich (pure Python), so one code
path serves both shapes: one machine, and the AWS functions, whose runtime has no `git`.
Each connector keeps a bare copy under `root/<key>.git`; a sync fetches its branch into it
(a shallow fetch: the branch's commit and only the objects the copy lacks), and lists,
diffs and reads from there: nothing is checked out.

A remote is an http(s) URL, or a local path where the shape allows one (the operator's
machine). Every HTTP request the fetch makes (Git's smart protocol, or its dumb one: a bare
repository's files served as they are) passes the outbound guard first; a redirect is not
followed (3xx fails the fetch), so it cannot lead inside the network. A fetch is bounded in
bytes and time, and the copies together in size (`max_disk_bytes`: on AWS the function's
/tmp): past it, other sources' copies go first, least recently fetched first; a source
whose copy is gone fetches it again (renames then found by blob id, services/sources/git.py).

Behind a proxy, the fetch goes through the one the environment names for the remote's
scheme (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, either case; a host NO_PROXY lists goes
direct), as the other outbound clients (httpx's) take it. The guard still checks the
remote's own URL, before each request: the proxy is the operator's, the target is not.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import certifi
import urllib3
from dulwich.client import GitProtocolError, LocalGitClient, Urllib3HttpGitClient
from dulwich.diff_tree import RenameDetector, tree_changes
from dulwich.errors import HangupException, NotGitRepository
from dulwich.objects import S_ISGITLINK, Commit
from dulwich.refs import check_ref_format
from dulwich.repo import Repo

from bunko.adapters.bounded_http import proxy_for
from bunko.errors import UpstreamError, ValidationError
from bunko.ports.sources import GitChange

USER_AGENT = "BunkoBot/1.0 (a knowledge base's Git source)"
_SYMLINK = 0o120000
_KINDS = {"add": "A", "delete": "D", "modify": "M", "rename": "R", "copy": "C"}
# What dulwich and the socket below it raise for a remote that cannot be read.
_UNREADABLE = (GitProtocolError, HangupException, NotGitRepository, urllib3.exceptions.HTTPError)


class _Budget:
    """The bytes and time one fetch may take; every HTTP read counts against it."""

    def __init__(self, max_bytes: int, max_seconds: float) -> None:
        self.max_bytes = max_bytes
        self.deadline = time.monotonic() + max_seconds
        self.max_seconds = max_seconds
        self.read = 0

    def take(self, n: int) -> None:
        self.read += n
        if self.read > self.max_bytes:
            raise UpstreamError(f"git fetch passed {self.max_bytes:,} bytes; stopped")
        if time.monotonic() > self.deadline:
            raise UpstreamError(f"git fetch took over {self.max_seconds:g} s; stopped")


class _GuardedHttp(Urllib3HttpGitClient):
    """dulwich's HTTP client, with the outbound guard before each request, no redirect
    followed, and each answer read against the fetch's budget."""

    def __init__(
        self, url: str, guard: Callable[[str], object], budget: _Budget, timeout: float
    ) -> None:
        options: dict[str, Any] = {
            "headers": {"User-Agent": USER_AGENT},
            "retries": urllib3.Retry(total=1, redirect=0, raise_on_redirect=False),
            "timeout": urllib3.Timeout(connect=timeout, read=timeout),
            "ca_certs": certifi.where(),
            "cert_reqs": "CERT_REQUIRED",
        }
        proxy = proxy_for(url)
        pool: urllib3.PoolManager
        if proxy is None:
            pool = urllib3.PoolManager(**options)
        else:
            found = urlsplit(proxy)
            if found.username:  # user:password@ in the proxy's URL: Proxy-Authorization
                login = f"{unquote(found.username)}:{unquote(found.password or '')}"
                options["proxy_headers"] = urllib3.make_headers(proxy_basic_auth=login)
            pool = urllib3.ProxyManager(proxy, **options)
        super().__init__(url, pool_manager=pool, timeout=timeout, quiet=True)
        self.guard = guard
        self.budget = budget

    def _http_request(  # type: ignore[override]
        self,
        url: str,
        headers: dict[str, str] | None = None,
        data: Any = None,
        raise_for_status: bool = True,
    ) -> tuple[Any, Callable[[int], bytes]]:
        self.guard(url)
        resp, read = super()._http_request(url, headers, data, raise_for_status=False)
        if 300 <= resp.status < 400:
            resp.close()
            raise UpstreamError(f"{url} answered a redirect ({resp.status}); not followed")
        if raise_for_status and resp.status == 404:
            raise NotGitRepository(f"{url}: 404")
        if raise_for_status and resp.status != 200:
            raise GitProtocolError(f"{url} answered {resp.status}")
        budget = self.budget

        def counted(n: int = -1) -> bytes:
            piece = read(n)
            budget.take(len(piece))
            return piece

        return resp, counted


class DulwichRepos:
    def __init__(
        self,
        root: Path,
        guard: Callable[[str, bool], object],
        *,
        local_paths: bool,
        max_fetch_bytes: int,
        max_disk_bytes: int,
        max_fetch_seconds: float = 600.0,
        timeout: float = 20.0,
    ) -> None:
        self.root = root
        self.guard = guard
        self.local_paths = local_paths
        self.max_fetch_bytes = max_fetch_bytes
        self.max_disk_bytes = max_disk_bytes
        self.max_fetch_seconds = max_fetch_seconds
        self.timeout = timeout

    def _dir(self, key: str) -> Path:
        if not key or "/" in key or key.startswith("."):
            raise ValidationError(f"not a source id: {key!r}")
        return self.root / f"{key}.git"

    def _repo(self, key: str) -> Repo:
        gitdir = self._dir(key)
        if not gitdir.exists():
            raise UpstreamError(f"git: no copy of {key} here; sync it again")
        return Repo(str(gitdir))

    def _local(self, remote: str) -> str:
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
        ref = f"refs/heads/{branch}".encode()
        if not branch or branch.startswith("-") or not check_ref_format(ref):
            raise ValidationError(f"git: not a branch name: {branch!r}")
        http = remote.startswith(("https://", "http://"))
        if http:
            self.guard(remote, allow_private)  # before anything is written or evicted
        else:
            path = self._local(remote)
        seconds = self.max_fetch_seconds
        if max_seconds is not None:
            seconds = max(0.0, min(seconds, max_seconds))
        budget = _Budget(self._room(key), seconds)
        client: Any
        if http:
            client = _GuardedHttp(
                remote, lambda url: self.guard(url, allow_private), budget, self.timeout
            )
            path = ""  # the client's base URL is the repository
        else:
            client = LocalGitClient()
        gitdir = self._dir(key)
        if not gitdir.exists():
            gitdir.mkdir(parents=True)
            Repo.init_bare(str(gitdir))
        with Repo(str(gitdir)) as repo:
            found: dict[str, bytes] = {}

            def wants(refs: dict[bytes, bytes], depth: int | None = None) -> list[bytes]:
                if ref not in refs:
                    raise ValidationError(f"git: the repository has no branch {branch!r}")
                found["head"] = refs[ref]
                return [] if refs[ref] in repo.object_store else [refs[ref]]

            try:
                client.fetch(path, repo, determine_wants=wants, depth=1, ref_prefix=[ref])
            except _UNREADABLE as exc:
                raise UpstreamError(f"git fetch {remote}: {exc}") from exc
            except OSError as exc:
                raise UpstreamError(f"git fetch {remote}: {exc}") from exc
            if "head" not in found:
                raise UpstreamError(f"git fetch {remote}: no branch {branch!r} listed")
            head = found["head"]
            if not isinstance(repo.object_store[head], Commit):
                raise UpstreamError(f"git: {branch!r} does not point at a commit")
            # Kept under refs/heads: the next fetch tells it as had, the next diff starts there.
            repo.refs[ref] = head
        gitdir.touch()  # recently used: the last copy evicted when /tmp is short
        return head.decode()

    def _room(self, key: str) -> int:
        """Bytes this fetch may bring: within both bounds, once other copies (least
        recently fetched first) are removed to make room."""
        if not self.root.exists():
            self.root.mkdir(parents=True, exist_ok=True)
        mine = self._dir(key)
        others = sorted(
            (p for p in self.root.glob("*.git") if p != mine), key=lambda p: p.stat().st_mtime
        )
        used = _size(mine) + sum(_size(p) for p in others)
        while others and used + self.max_fetch_bytes > self.max_disk_bytes:
            gone = others.pop(0)
            used -= _size(gone)
            shutil.rmtree(gone, ignore_errors=True)
        room = min(self.max_fetch_bytes, self.max_disk_bytes - used)
        if room <= 0:
            raise UpstreamError(
                f"git: the copy of this repository fills the {self.max_disk_bytes:,} bytes "
                "kept for Git copies here"
            )
        return room

    def tree(self, key: str, commit: str) -> dict[str, str]:
        files: dict[str, str] = {}
        with self._repo(key) as repo:
            store = repo.object_store
            root = store[commit.encode()].tree  # type: ignore[attr-defined]
            for entry in store.iter_tree_contents(root):
                mode = entry.mode or 0
                if S_ISGITLINK(mode) or (mode & 0o170000) == _SYMLINK:
                    continue  # submodules and symlinks are not files
                assert entry.path is not None and entry.sha is not None
                files[entry.path.decode("utf-8", "surrogateescape")] = entry.sha.decode()
        return files

    def sizes(self, key: str, blobs: Sequence[str]) -> dict[str, int]:
        # dulwich's pack indexes keep no sizes: a blob is inflated to know its own, which is
        # why only the blobs a sync may read are asked for.
        with self._repo(key) as repo:
            return {b: len(repo.object_store.get_raw(b.encode())[1]) for b in blobs}

    def diff(self, key: str, old: str, new: str) -> list[GitChange]:
        with self._repo(key) as repo:
            store = repo.object_store
            if old.encode() not in store:
                return []  # a fresh copy (a new function instance), a force-push: no renames
            trees = [store[c.encode()].tree for c in (old, new)]  # type: ignore[attr-defined]
            changes: list[GitChange] = []
            for change in tree_changes(
                store, trees[0], trees[1], rename_detector=RenameDetector(store)
            ):
                kind = _KINDS.get(change.type)
                if kind is None:
                    continue
                new_path = change.new.path if change.new and change.new.path else None
                old_path = change.old.path if change.old and change.old.path else None
                path = (new_path or old_path or b"").decode("utf-8", "surrogateescape")
                before = old_path.decode("utf-8", "surrogateescape") if old_path else None
                changes.append(GitChange(kind, path, before if kind in "RC" else None))
        return changes

    def read(self, key: str, blobs: Sequence[str]) -> Iterator[tuple[str, bytes]]:
        with self._repo(key) as repo:
            for blob in blobs:
                yield blob, repo.object_store[blob.encode()].as_raw_string()

    def forget(self, key: str) -> None:
        shutil.rmtree(self._dir(key), ignore_errors=True)


def _size(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
