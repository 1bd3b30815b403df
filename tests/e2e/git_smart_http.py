"""A Git repository served over Git's smart HTTP protocol on a local socket: `git
http-backend` (the CGI program Git ships for it) behind a plain HTTP server, over a bare copy
of a repository made in the test; `update()` pushes the working repository's new commits to
it. Every request is logged (method, path, bytes answered), and `redirect_to` makes every
request answer a 302 to that address instead, so a test can watch what a fetch asks for."""

from __future__ import annotations

import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.e2e.git_repo import Repo


class SmartGitOverHttp:
    def __init__(self, repo: Repo, root: Path, name: str = "served.git") -> None:
        self.repo = repo
        self.root = root
        self.bare = root / name
        subprocess.run(
            ["git", "clone", "--quiet", "--bare", str(repo.root), str(self.bare)],
            check=True,
            capture_output=True,
        )
        self.log: list[tuple[str, str, int]] = []
        self.redirect_to: str | None = None
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._cgi(b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._cgi(self.rfile.read(length))

            def _cgi(self, body: bytes) -> None:
                if served.redirect_to is not None:
                    served.log.append((self.command, self.path, 0))
                    self.send_response(302)
                    self.send_header("Location", served.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path, _, query = self.path.partition("?")
                env = {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "GIT_PROJECT_ROOT": str(served.root),
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "REQUEST_METHOD": self.command,
                    "PATH_INFO": path,
                    "QUERY_STRING": query,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(len(body)),
                    "REMOTE_ADDR": "127.0.0.1",
                }
                if self.headers.get("Git-Protocol"):
                    env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
                if self.headers.get("Content-Encoding"):
                    env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
                done = subprocess.run(
                    ["git", "http-backend"], input=body, capture_output=True, env=env
                )
                head, _, payload = done.stdout.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                served.log.append((self.command, self.path, len(payload)))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}"
        # Polled every 50 ms, so that close() waits no half second (serve_forever's default)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def bytes_served(self) -> int:
        return sum(n for _, _, n in self.log)

    def update(self) -> None:
        """The working repository's branches, pushed (a force-push rewrites history)."""
        self.repo.git("push", "--quiet", "--force", str(self.bare), "refs/heads/*:refs/heads/*")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
