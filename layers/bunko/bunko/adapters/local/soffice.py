"""SofficeConverter: office documents → PDF with `soffice --headless` (LibreOffice).

Each conversion runs in its own temporary folder with its own LibreOffice profile, since
two soffice processes sharing a profile block each other; a semaphore bounds how many run
at once (each takes a core and ~200 MB).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path, PurePosixPath

from bunko.errors import ParseError, ServiceUnavailableError

_QUEUE_WAIT_SECONDS = 60


class SofficeConverter:
    def __init__(
        self, binary: str | None = None, *, timeout: float = 120.0, max_concurrent: int = 1
    ) -> None:
        self.binary = binary or shutil.which("soffice") or shutil.which("libreoffice")
        self.timeout = timeout
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
            root = Path(tmp)
            source = root / f"input{suffix}"  # never the client's name on our disk
            source.write_bytes(data)
            out_dir = root / "out"
            command = [
                str(self.binary),
                f"-env:UserInstallation={(root / 'profile').as_uri()}",
                "--headless",
                "--norestore",
                "--nologo",
                "--convert-to",
                "pdf",
                "--outdir",
                str(out_dir),
                str(source),
            ]
            stderr = self._run(command, env={**os.environ, "HOME": tmp})
            result = out_dir / "input.pdf"
            if not result.is_file() or result.stat().st_size == 0:
                detail = stderr.strip().splitlines()[-1][:200] if stderr.strip() else "no output"
                # "could not be loaded" also means the component for this type (Calc for
                # spreadsheets, Impress for slides) is not installed.
                raise ParseError(
                    f"LibreOffice could not convert {filename} ({detail}); the file may be "
                    "damaged, or the LibreOffice component for its type is not installed"
                )
            return result.read_bytes()

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
