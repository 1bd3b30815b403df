"""S3BlobStore: blobs as objects under one key prefix of a bucket, plus presigned uploads."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from bunko.errors import NotFoundError, ValidationError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client  # type-only; not a runtime dependency

_DELETE_BATCH = 1000  # DeleteObjects takes at most 1000 keys
_MISSING = {"404", "NoSuchKey", "NotFound"}


def check_key(key: str) -> str:
    """The same rules as the local store, so a key valid here is valid everywhere."""
    parts = PurePosixPath(key).parts
    if (
        not key
        or key.startswith("/")
        or "\\" in key
        or "\x00" in key
        or ".." in parts
        or any(ord(ch) < 32 for ch in key)
    ):
        raise ValidationError(f"invalid blob key {key!r}")
    return key


class S3BlobStore:
    def __init__(self, client: S3Client, *, bucket: str, prefix: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix if not prefix or prefix.endswith("/") else prefix + "/"

    def object_key(self, key: str) -> str:
        """The bucket key of a blob key."""
        return self.prefix + check_key(key)

    def put(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        extra = {"ContentType": content_type} if content_type else {}
        self.client.put_object(Bucket=self.bucket, Key=self.object_key(key), Body=data, **extra)

    def get(self, key: str) -> bytes:
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=self.object_key(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                raise NotFoundError(f"blob {key!r} not found") from exc
            raise
        return response["Body"].read()

    def exists(self, key: str) -> bool:
        try:
            self.client.head_object(Bucket=self.bucket, Key=self.object_key(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                return False
            raise
        return True

    def delete(self, key: str) -> None:
        # S3 deletes are idempotent: deleting a missing key succeeds.
        self.client.delete_object(Bucket=self.bucket, Key=self.object_key(key))

    def delete_prefix(self, prefix: str) -> int:
        full = self.object_key(prefix)
        deleted = 0
        paginator = self.client.get_paginator("list_objects_v2")
        batch: list[dict[str, str]] = []
        for page in paginator.paginate(Bucket=self.bucket, Prefix=full):
            for obj in page.get("Contents", []):
                batch.append({"Key": obj["Key"]})
                if len(batch) == _DELETE_BATCH:
                    deleted += self._delete_batch(batch)
                    batch = []
        if batch:
            deleted += self._delete_batch(batch)
        return deleted

    def _delete_batch(self, batch: list[dict[str, str]]) -> int:
        response = self.client.delete_objects(
            Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True}
        )
        errors = response.get("Errors", [])
        if errors:
            first = errors[0]
            raise RuntimeError(f"could not delete {first.get('Key')}: {first.get('Message')}")
        return len(batch)
