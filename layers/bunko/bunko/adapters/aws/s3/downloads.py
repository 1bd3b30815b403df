"""OriginalLinks on S3: a presigned GET of the original's object, shown inline under its own
name and type (or
downloaded, for a type a browser could run script in). S3 checks the signature; the API never carries the bytes (a Lambda response
stops at 6 MB, an original may be 100)."""

from __future__ import annotations

from bunko.adapters.aws.s3.blobs import S3BlobStore
from bunko.domain import Document
from bunko.errors import NotFoundError
from bunko.ports.downloads import SignedLink, content_disposition

LINK_SECONDS = 300


class S3OriginalLinks:
    served_here = False

    def __init__(self, blobs: S3BlobStore, *, expires_in: int = LINK_SECONDS) -> None:
        self.blobs = blobs
        self.expires_in = expires_in

    def link_to(self, document: Document) -> SignedLink:
        if not document.blob_key:
            raise NotFoundError(f"file {document.id} has no stored original")
        params = {
            "Bucket": self.blobs.bucket,
            "Key": self.blobs.object_key(document.blob_key),
            "ResponseContentType": document.mime,
            "ResponseContentDisposition": content_disposition(document.name, document.mime),
        }
        url = self.blobs.client.generate_presigned_url(
            "get_object", Params=params, ExpiresIn=self.expires_in, HttpMethod="GET"
        )
        return SignedLink(url=url, expires_in=self.expires_in)

    def verify(self, document: Document, token: str) -> bool:
        return False  # S3 checks its own links; none lead to the API
