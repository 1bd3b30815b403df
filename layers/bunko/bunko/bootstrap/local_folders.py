"""The embedded shape's check of the folders /settings may monitor (services/settings'
FolderCheck): real folders of this machine, apart from the data folder."""

from __future__ import annotations

from pathlib import Path

from bunko.errors import ValidationError


def local_folder_check(data_dir: Path):
    """A FolderCheck for the embedded server: an existing folder, absolute, that neither
    lies inside the data folder nor contains it (Bunko would ingest its own blobs)."""
    data = Path(data_dir).resolve()

    def check(raw: str) -> str:
        if not raw or "\x00" in raw or not Path(raw).is_absolute():
            raise ValidationError(f"monitor_paths: {raw!r} is not an absolute path")
        path = Path(raw).resolve()
        if not path.is_dir():
            raise ValidationError(f"monitor_paths: {raw!r} is not an existing folder")
        if path.is_relative_to(data) or data.is_relative_to(path):
            raise ValidationError(f"monitor_paths: {raw!r} overlaps the data folder")
        return str(path)

    return check
