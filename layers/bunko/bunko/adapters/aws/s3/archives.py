"""ArchiveSpace in the bucket: archives under a private prefix (`moves/`), which only the
functions' roles reach and the bucket's lifecycle rule empties after a day. An export's
archive is downloaded by a presigned GET (the API never carries it: a Lambda response stops
at 6 MB, API Gateway's at 10 MB); an import's upload is read from there by the function that
runs the import. Scratch files live in the function's temporary storage (`scratch`: the
settings' scratch folder, BUNKO_SCRATCH_DIR)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from bunko.adapters.aws.s3.presign import presign_put_object
from bunko.deploy_schema import MOVES_PREFIX
from bunko.domain import new_id
from bunko.errors import NotFoundError
from bunko.ports.downloads import content_disposition
from bunko.ports.uploads import SignedUpload

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_MISSING = {"404", "NoSuchKey", "NotFound"}


class S3Archives:
    served_here = False

    def __init__(
        self, client: S3Client, *, bucket: str, scratch: Path, prefix: str = MOVES_PREFIX
    ) -> None:
        self.client, self.bucket, self.prefix = client, bucket, prefix
        self.root = scratch

    def object_key(self, key: str) -> str:
        if not key.replace("-", "").replace("_", "").isalnum():
            raise NotFoundError(f"no archive {key!r}")
        return f"{self.prefix}{key}.zip"

    def scratch(self, name: str) -> Path:
        folder = self.root / f"bunko-move-{new_id()}"
        folder.mkdir(mode=0o700, parents=True)
        return folder / name

    def keep(self, key: str, path: Path) -> None:
        self.client.upload_file(
            str(path),
            self.bucket,
            self.object_key(key),
            ExtraArgs={"ContentType": "application/zip"},
        )
        self.discard(path)

    def fetch(self, key: str) -> Path:
        path = self.scratch("archive.zip")
        try:
            self.client.download_file(self.bucket, self.object_key(key), str(path))
        except ClientError as exc:
            self.discard(path)
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                raise NotFoundError(f"no archive {key!r}") from None
            raise
        return path

    def local(self, key: str) -> Path | None:
        return None

    def link(self, key: str, filename: str, seconds: int) -> str:
        params = {
            "Bucket": self.bucket,
            "Key": self.object_key(key),
            "ResponseContentType": "application/zip",
            "ResponseContentDisposition": content_disposition(filename, "application/zip"),
        }
        return self.client.generate_presigned_url(
            "get_object", Params=params, ExpiresIn=seconds, HttpMethod="GET"
        )

    def upload_link(self, key: str, size: int, seconds: int) -> SignedUpload:
        """A presigned PUT of exactly `size` bytes as `key` (a body reaches the API up to
        4 MiB; S3 takes the archive whole)."""
        return presign_put_object(
            self.client,
            bucket=self.bucket,
            key=self.object_key(key),
            content_type="application/zip",
            expires_in=seconds,
            content_length=size,
        )

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.object_key(key))

    @staticmethod
    def discard(path: Path) -> None:
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            path.parent.rmdir()
