"""A Git repository served over HTTP on a local socket, as Git's "dumb" HTTP protocol serves
one: a bare copy of a repository (made with the git binary) whose files a plain HTTP server
answers; `update()` pushes the working repository's new commits to it. Every request is
logged, so a test can count what a test of the connection or a sync asked for."""

from __future__ import annotations

import functools
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.e2e.git_repo import Repo


class GitOverHttp:
    def __init__(self, repo: Repo, root: Path) -> None:
        self.repo = repo
        self.bare = root / "served.git"
        subprocess.run(
            ["git", "clone", "--quiet", "--bare", str(repo.root), str(self.bare)],
            check=True,
            capture_output=True,
        )
        self.log: list[str] = []
        served = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                served.log.append(self.path)
                super().do_GET()

            def log_message(self, *args: object) -> None:
                pass

        handler = functools.partial(Handler, directory=str(self.bare))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.update()
        # Polled every 50 ms, so that close() waits no half second (serve_forever's default)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def update(self) -> None:
        """The working repository's branches, pushed; then the files the dumb protocol
        reads refs from (info/refs, objects/info/packs) written again."""
        self.repo.git("push", "--quiet", "--force", str(self.bare), "refs/heads/*:refs/heads/*")
        subprocess.run(
            ["git", "--git-dir", str(self.bare), "update-server-info"],
            check=True,
            capture_output=True,
        )

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
