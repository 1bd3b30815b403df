"""The embedded shape's data folder is the owner's alone: documents, the metadata database
(users, password hashes, API key hashes), the index and the drop folder hold other
people's data, so no other local account may read them (as secrets/ already was)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PRIVATE_UMASK = 0o077  # new files 0600, new folders 0700


def make_private(data_dir: Path) -> None:
    """From now on every file this process creates is owner-only (umask 077), and the data
    folder and what is already at its top (bunko.db, blobs/, index/, drop/ …) become so."""
    os.umask(PRIVATE_UMASK)
    data_dir.mkdir(parents=True, exist_ok=True)
    for path in [data_dir, *data_dir.iterdir()]:
        with contextlib.suppress(OSError):  # not ours to change (another owner): leave it
            mode = path.stat().st_mode
            os.chmod(path, (mode & 0o700) | (0o700 if path.is_dir() else 0o600))
