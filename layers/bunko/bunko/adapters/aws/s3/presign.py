"""UploadSigner on S3: a presigned PUT into the drop prefix, for files past Lambda's 6 MB payload.

The object's key carries the caller's workspace (`<drop_prefix><workspace>/<path>`), so the
S3 notification ingests it into that workspace like any drop. A key is signed only if the
drop handler maps it back to exactly that workspace and path: a path it would skip (a
hidden or temporary file's name) gets a 400 instead of a URL whose upload is never indexed,
and so does a key past S3's 1,024 bytes (a URL whose PUT S3 would refuse). The upload's
options are signed as object metadata (s3/drops.py drop_metadata), so the client cannot change
how its file is indexed after the URL is issued. Its document metadata (up to 16 KiB: past
S3's 2 KB of object metadata) is written now as the key's sidecar, which the drop reads when
the file arrives, as it reads any sidecar.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from bunko.adapters.aws.s3.drops import drop_key, drop_metadata, locate
from bunko.deploy_schema import PRESIGNED_TAG, PRESIGNED_TAG_VALUE
from bunko.domain.metadata import SIDECAR_SUFFIX, sidecar_json
from bunko.errors import ValidationError
from bunko.ports.uploads import DropOptions, SignedUpload

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
else:
    S3Client = object

MAX_KEY_BYTES = 1024  # S3's limit on an object key (UTF-8)


class S3UploadSigner:
    def __init__(self, client: S3Client, *, bucket: str, drop_prefix: str, expires_in: int) -> None:
        self.client = client
        self.bucket = bucket
        self.drop_prefix = drop_prefix
        self.expires_in = expires_in

    def sign_upload(
        self,
        *,
        workspace_id: str,
        path: str,
        content_type: str | None,
        size: int,
        options: DropOptions,
    ) -> SignedUpload:
        key = drop_key(drop_prefix=self.drop_prefix, workspace_id=workspace_id, path=path)
        target = locate(key, drop_prefix=self.drop_prefix)
        if target is None or (target.workspace_id, target.path) != (workspace_id, path):
            raise ValidationError(
                f"invalid path {path!r}: a file or folder name starting with '.' or '~$', or"
                " a temporary file's name, is never indexed from a drop"
            )
        if len(key.encode("utf-8")) > MAX_KEY_BYTES:
            raise ValidationError(
                f"path is too long: its S3 key would be over {MAX_KEY_BYTES} bytes in UTF-8"
            )
        if key.endswith(SIDECAR_SUFFIX):
            raise ValidationError(
                f"invalid path {path!r}: a name ending in {SIDECAR_SUFFIX} is a metadata "
                "sidecar, never a document; send the file's metadata as `metadata` instead"
            )
        if options.metadata is not None:
            self.client.put_object(
                Bucket=self.bucket,
                Key=key + SIDECAR_SUFFIX,
                Body=sidecar_json(options.metadata),
                ContentType="application/json",
            )
        return presign_put_object(
            self.client,
            bucket=self.bucket,
            key=key,
            content_type=content_type,
            expires_in=self.expires_in,
            metadata=drop_metadata(replace(options, presigned=True)),
            content_length=size,
            # Signed like the metadata: the bucket's lifecycle rule expires tagged drops.
            tagging=f"{PRESIGNED_TAG}={PRESIGNED_TAG_VALUE}",
        )


def presign_put_object(
    client: S3Client,
    *,
    bucket: str,
    key: str,
    content_type: str | None,
    expires_in: int,
    metadata: dict[str, str] | None = None,
    content_length: int | None = None,
    tagging: str | None = None,
) -> SignedUpload:
    """Presign a PUT of an absolute bucket key. Signed headers (Content-Type, metadata) must
    be sent exactly as returned in `headers`, or S3 rejects the signature. With
    `content_length`, Content-Length is signed too: a body of any other size is refused
    (every HTTP client sends that header itself, so it is not in `headers`). `tagging`: the
    object's tags as a query string (`x-amz-tagging`, signed and sent like the metadata)."""
    params: dict[str, object] = {"Bucket": bucket, "Key": key}
    if content_length is not None:
        params["ContentLength"] = content_length
    headers: dict[str, str] = {}
    if content_type:
        params["ContentType"] = content_type
        headers["Content-Type"] = content_type
    if metadata:
        params["Metadata"] = metadata
        headers.update({f"x-amz-meta-{k}": v for k, v in metadata.items()})
    if tagging:
        params["Tagging"] = tagging
        headers["x-amz-tagging"] = tagging
    url = client.generate_presigned_url(
        "put_object", Params=params, ExpiresIn=expires_in, HttpMethod="PUT"
    )
    return SignedUpload(url=url, key=key, method="PUT", headers=headers, expires_in=expires_in)
