"""UploadSigner on S3: a presigned PUT into the drop prefix, for files past Lambda's 6 MB payload.

The object's key carries the caller's workspace (`<drop_prefix><workspace>/<path>`), so the
S3 notification ingests it into that workspace like any drop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bunko.adapters.aws.s3_drops import category_metadata, drop_key
from bunko.ports.uploads import SignedUpload

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
else:
    S3Client = object


class S3UploadSigner:
    def __init__(self, client: S3Client, *, bucket: str, drop_prefix: str, expires_in: int) -> None:
        self.client = client
        self.bucket = bucket
        self.drop_prefix = drop_prefix
        self.expires_in = expires_in

    def sign_upload(
        self, *, workspace_id: str, path: str, content_type: str | None, category: str | None
    ) -> SignedUpload:
        key = drop_key(drop_prefix=self.drop_prefix, workspace_id=workspace_id, path=path)
        return presign_put_object(
            self.client,
            bucket=self.bucket,
            key=key,
            content_type=content_type,
            expires_in=self.expires_in,
            metadata=category_metadata(category) if category else None,
        )


def presign_put_object(
    client: S3Client,
    *,
    bucket: str,
    key: str,
    content_type: str | None,
    expires_in: int,
    metadata: dict[str, str] | None = None,
) -> SignedUpload:
    """Presign a PUT of an absolute bucket key. Signed headers (Content-Type, metadata) must
    be sent exactly as returned in `headers`, or S3 rejects the signature."""
    params: dict[str, object] = {"Bucket": bucket, "Key": key}
    headers: dict[str, str] = {}
    if content_type:
        params["ContentType"] = content_type
        headers["Content-Type"] = content_type
    if metadata:
        params["Metadata"] = metadata
        headers.update({f"x-amz-meta-{k}": v for k, v in metadata.items()})
    url = client.generate_presigned_url(
        "put_object", Params=params, ExpiresIn=expires_in, HttpMethod="PUT"
    )
    return SignedUpload(url=url, key=key, method="PUT", headers=headers, expires_in=expires_in)
