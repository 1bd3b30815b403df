"""SofficeConverter: office documents → PDF with `soffice --headless` (LibreOffice).

Each conversion runs in its own temporary folder with its own LibreOffice profile, since
two soffice processes sharing a profile block each other; a semaphore bounds how many run
at once (each takes a core and ~200 MB). Each conversion is jailed (`SofficeSandbox`): no
network, and no file of the host beyond its own folder, since documents can link pictures
by URL and LibreOffice would fetch them. Without a sandbox it refuses to convert, unless
isolation was switched off on purpose (`sandbox=False`), which it logs on every conversion.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path, PurePosixPath

from bunko.adapters.local.office_links import strip_external_links
from bunko.adapters.local.soffice_sandbox import (
    JOB_INSIDE,
    NOBODY,
    SandboxUnavailableError,
    SofficeSandbox,
)
from bunko.errors import ParseError, ServiceUnavailableError

_QUEUE_WAIT_SECONDS = 60
log = logging.getLogger(__name__)


class SofficeConverter:
    def __init__(
        self,
        binary: str | None = None,
        *,
        timeout: float = 120.0,
        max_concurrent: int = 1,
        sandbox: bool = True,
    ) -> None:
        self.binary = binary or shutil.which("soffice") or shutil.which("libreoffice")
        self.timeout = timeout
        self.sandbox = SofficeSandbox(self.binary) if sandbox and self.binary else None
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._version: str | None = None

    def available(self) -> bool:
        return bool(self.binary) and Path(self.binary).is_file()

    def version(self) -> str | None:
        if not self.available():
            return None
        if self._version is None:
            try:
                out = subprocess.run(  # noqa: S603 - a fixed binary, no shell
                    [self.binary, "--version"], capture_output=True, text=True, timeout=30
                ).stdout
            except (OSError, subprocess.TimeoutExpired):
                return None
            self._version = out.strip().splitlines()[0] if out.strip() else "unknown"
        return self._version

    def convert_to_pdf(self, data: bytes, filename: str) -> bytes:
        if not self.available():
            raise ServiceUnavailableError("LibreOffice is not installed: soffice was not found")
        if not self._slots.acquire(timeout=_QUEUE_WAIT_SECONDS):
            raise ServiceUnavailableError("the LibreOffice converter is busy; try again later")
        try:
            return self._convert(data, filename)
        finally:
            self._slots.release()

    def _convert(self, data: bytes, filename: str) -> bytes:
        suffix = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
        with tempfile.TemporaryDirectory(prefix="bunko-soffice-") as tmp:
            job = Path(tmp) / "job"
            (job / "out").mkdir(parents=True)
            source = job / f"input{suffix}"  # never the client's name on our disk
            source.write_bytes(strip_external_links(data, suffix))  # the sandbox's 2nd wall
            inside = Path(JOB_INSIDE) if self.sandbox else job
            command = [
                str(self.binary),
                f"-env:UserInstallation={(inside / 'profile').as_uri()}",
                "--headless",
                "--norestore",
                "--nologo",
                "--convert-to",
                "pdf",
                "--outdir",
                str(inside / "out"),
                str(inside / source.name),
            ]
            if self.sandbox is None:
                log.warning("LibreOffice runs without isolation (BUNKO_LIBREOFFICE_SANDBOX=off)")
                env = {**os.environ, "HOME": str(job)}
            else:
                command = self._jailed(command, job=job, root=Path(tmp) / "root")
                # the jail's /tmp is a tmpfs of its own
                env = {"HOME": JOB_INSIDE, "TMPDIR": "/tmp", "PATH": "/usr/bin:/bin"}  # noqa: S108
                env["LANG"] = "C.UTF-8"
            stderr = self._run(command, env=env)
            result = job / "out" / "input.pdf"
            if not result.is_file() or result.stat().st_size == 0:
                detail = stderr.strip().splitlines()[-1][:200] if stderr.strip() else "no output"
                # "could not be loaded" also means the component for this type (Calc for
                # spreadsheets, Impress for slides) is not installed.
                raise ParseError(
                    f"LibreOffice could not convert {filename} ({detail}); the file may be "
                    "damaged, or the LibreOffice component for its type is not installed"
                )
            return result.read_bytes()

    def _jailed(self, command: list[str], *, job: Path, root: Path) -> list[str]:
        assert self.sandbox is not None
        try:
            wrapped = self.sandbox.wrap(command, job=job, root=root)
        except SandboxUnavailableError as exc:
            raise ServiceUnavailableError(
                f"LibreOffice is not run without isolation, and {exc}"
            ) from exc
        if self.sandbox.drops_privileges():
            for path in [job, *job.rglob("*")]:
                os.chown(path, NOBODY, NOBODY)
        return wrapped

    def _run(self, command: list[str], *, env: dict[str, str]) -> str:
        # A session of its own, so a timeout kills soffice.bin too, not only the launcher.
        process = subprocess.Popen(  # noqa: S603 - a fixed binary, no shell
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        try:
            _, stderr = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired as exc:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise ServiceUnavailableError(
                f"LibreOffice did not finish within {self.timeout:.0f} seconds"
            ) from exc
        return stderr
