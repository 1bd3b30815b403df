"""Secrets generated on first run and kept in the data folder (readable by the owner only)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def load_or_create_secret(path: Path, generate: Callable[[], str]) -> str:
    """The secret stored at `path`; on first use, `generate()` it and store it.

    Two processes starting at once agree on one secret: the file is written aside and
    hard-linked into place, which fails if another process linked first.
    """
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(generate())
        os.chmod(tmp, 0o600)
        with contextlib.suppress(FileExistsError):  # another process won: use its secret
            os.link(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path.read_text(encoding="utf-8").strip()
