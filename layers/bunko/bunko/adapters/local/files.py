"""FileBlobStore: blobs as files under one folder, keys checked against path traversal."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from bunko.errors import NotFoundError, ValidationError


class FileBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        parts = PurePosixPath(key).parts
        if not key or key.startswith("/") or "\\" in key or "\x00" in key or ".." in parts:
            raise ValidationError(f"invalid blob key {key!r}")
        path = (self.root / Path(*parts)).resolve()
        if not path.is_relative_to(self.root) or path == self.root:
            raise ValidationError(f"invalid blob key {key!r}")
        return path

    def put(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        path = self._path(key)
        for attempt in range(3):
            try:
                return self._write(path, data)
            except FileNotFoundError:  # a delete_prefix removed the folder meanwhile
                if attempt == 2:
                    raise

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        path = self._path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError) as exc:
            raise NotFoundError(f"blob {key!r} not found") from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def delete_prefix(self, prefix: str) -> int:
        base = self._path(prefix.rstrip("/"))
        if base.is_file():
            base.unlink(missing_ok=True)
            return 1
        if not base.is_dir():
            return 0
        # Idempotent, as S3's delete is: two deletes of one document may race here.
        try:
            count = sum(1 for p in base.rglob("*") if p.is_file())
        except FileNotFoundError:
            return 0
        shutil.rmtree(base, ignore_errors=True)
        return count
