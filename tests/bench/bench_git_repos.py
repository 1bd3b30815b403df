"""The Git port's reads alone (issue 48), the `git` binary (GitCli) against dulwich
(DulwichRepos): a repository of N files served over Git's smart HTTP protocol (`git
http-backend` on a local socket), or read from a local path; a first fetch into an empty
copy with every file listed and read, then a commit that changes 1% of the files (and renames
as many) fetched, listed, diffed and the changed files read.

    .venv/bin/python -m tests.bench.bench_git_repos [--files 1000] [--local]

Prints per adapter and step: seconds (median of --runs), HTTP requests and bytes served."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bunko.adapters.git_dulwich import DulwichRepos
from tests.bench.git_binary import GitCli
from tests.e2e.git_repo import Repo
from tests.e2e.git_smart_http import SmartGitOverHttp


def make_repo(root: Path, files: int) -> Repo:
    repo = Repo(root)
    for n in range(files):
        words = " ".join(f"word{(n * 7 + i) % 97}" for i in range(120))
        repo.write(f"docs/s{n % 20}/page{n}.md", f"# Page {n}\n\n{words}\n")
    repo.commit("first")
    return repo


def one_run(kind: str, files: int, local: bool, tmp: Path) -> dict[str, tuple[float, int, int]]:
    repo = make_repo(tmp / "repo", files)
    served = SmartGitOverHttp(repo, tmp)
    remote = str(repo.root) if local else served.url
    guard = lambda url, private: url  # noqa: E731 - the bench measures reads, not the guard
    if kind == "git":
        repos = GitCli(tmp / "copies", guard, local_paths=True)
    else:
        repos = DulwichRepos(
            tmp / "copies",
            guard,
            local_paths=True,
            max_fetch_bytes=1 << 30,
            max_disk_bytes=1 << 31,
        )
    out = {}

    def step(label: str, body) -> None:
        before, started = len(served.log), time.perf_counter()
        body()
        seconds = time.perf_counter() - started
        log = served.log[before:]
        out[label] = (seconds, len(log), sum(n for _, _, n in log))

    state: dict[str, object] = {}

    def first() -> None:
        head = repos.fetch("k", remote, "main", allow_private=True)
        tree = repos.tree("k", head)
        blobs = sorted(set(tree.values()))
        assert len(repos.sizes("k", blobs)) == len(blobs)
        assert sum(1 for _ in repos.read("k", blobs)) == len(blobs)
        state["head"] = head

    step("from empty", first)
    changed = max(1, files // 100)
    (repo.root / "moved").mkdir()
    for n in range(changed):
        repo.write(f"docs/s{n % 20}/page{n}.md", f"# Page {n}\n\nchanged\n")
        repo.git("mv", f"docs/s{(n + 50) % 20}/page{n + 50}.md", f"moved/page{n + 50}.md")
    repo.commit("second")
    served.update()

    def again() -> None:
        old = str(state["head"])
        head = repos.fetch("k", remote, "main", allow_private=True)
        tree = repos.tree("k", head)
        changes = repos.diff("k", old, head)
        assert sum(1 for c in changes if c.status == "R") == changed, changes
        wanted = sorted({tree[c.path] for c in changes if c.status == "M"})
        assert len(repos.sizes("k", wanted)) == changed
        assert sum(1 for _ in repos.read("k", wanted)) == changed

    step("1% changed", again)
    served.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--local", action="store_true", help="a local path, not smart HTTP")
    args = parser.parse_args()
    where = "a local path" if args.local else "smart HTTP"
    print(f"{args.files} files over {where}, median of {args.runs} runs")
    for kind in ("git", "dulwich"):
        runs = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                runs.append(one_run(kind, args.files, args.local, Path(tmp)))
        for label in runs[0]:
            seconds = statistics.median(r[label][0] for r in runs)
            _, requests, served = runs[0][label]
            print(
                f"{kind:<8} {label:<11} {seconds:7.2f} s  requests {requests:3}  "
                f"bytes served {served:,}"
            )


if __name__ == "__main__":
    main()
