"""One `bunko serve` per data folder: an exclusive lock on `<data dir>/serve.lock`.

Two servers on one folder would both watch the drop folder, both resume unfinished ingest and
both keep in-memory index engines; the second refuses to start instead, naming the first.
Other processes (`bunko ingest`, `bunko reindex`, `bunko mcp`) may still write: the server
sees their writes without a restart (LocalSearchIndex notices another process's commits).
The OS releases the lock when the process ends, even on SIGKILL.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows: no advisory locks here; one server per folder is on the user
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "serve.lock"


class DataDirLocked(SystemExit):
    """Another server holds the data folder."""


def lock_data_dir(data_dir: Path, *, port: int) -> IO[str] | None:
    """Hold the folder's lock for this process's lifetime; DataDirLocked if it is taken."""
    if fcntl is None:
        return None
    data_dir.mkdir(parents=True, exist_ok=True)
    handle = (data_dir / LOCK_NAME).open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise DataDirLocked(
            f"refusing to start: another Bunko server ({holder}) is using the data folder "
            f"{data_dir}; stop it, or give this one its own --data-dir"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}, port {port}\n")
    handle.flush()
    return handle
