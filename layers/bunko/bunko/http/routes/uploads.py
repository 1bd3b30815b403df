"""POST /uploads/presign: a signed URL to PUT a file too large for the API's request body.

The client PUTs the file to the returned URL with the returned headers; the object is ingested
into the caller's workspace when it arrives (follow its status in the document list by path).
Mounted only where the backend can sign uploads (S3 on AWS).

The upload's options are /upload's form fields, with /upload's names and limits (category,
chunkSize, chunkOverlap, mode); they are signed into the URL as object metadata and applied
when the object is ingested. They are checked here, since a drop that fails its options at
ingest has no one to answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from bunko.domain.ingest_options import (
    MAX_CHUNK_OVERLAP,
    MAX_CHUNK_SIZE,
    MIN_CHUNK_SIZE,
    IngestMode,
)
from bunko.domain.metadata import given_metadata
from bunko.errors import ServiceUnavailableError
from bunko.http.deps import ServicesDep, Writer
from bunko.ports.uploads import DropOptions

if TYPE_CHECKING:
    pass

router = APIRouter(prefix="/uploads", tags=["uploads"])
# A media type (RFC 9110: type/subtype, parameters in printable ASCII): it becomes a signed
# header the client must send, so nothing that could not be a header value is signed.
_MEDIA_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
MEDIA_TYPE = rf"^{_MEDIA_NAME}/{_MEDIA_NAME}( *;[ -~]*)?$"


class PresignRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    path: str = Field(min_length=1, max_length=1024, description="The document's logical path")
    category: str | None = Field(
        default=None, max_length=100, description="A label search can filter by (as /upload)"
    )
    content_type: str | None = Field(
        default=None, alias="contentType", max_length=200, pattern=MEDIA_TYPE
    )
    size: int = Field(
        ge=0,
        description="The file's exact size in bytes: checked against the limits and the "
        "storage quota now, and signed, so a PUT of any other size is refused",
    )
    # /upload's form fields, with its bounds (characters)
    chunk_size: int | None = Field(
        default=None, alias="chunkSize", ge=MIN_CHUNK_SIZE, le=MAX_CHUNK_SIZE
    )
    chunk_overlap: int | None = Field(
        default=None, alias="chunkOverlap", ge=0, le=MAX_CHUNK_OVERLAP
    )
    mode: IngestMode | None = Field(default=None, description="fast (default) or precise")
    metadata: dict[str, Any] | None = Field(
        default=None,
        description="(Bunko) The file's metadata, as /upload's (docs/rest.md \"Metadata\")",
    )


class PresignResponse(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    url: str
    method: str
    headers: dict[str, str]
    key: str
    path: str
    expires_in: int = Field(alias="expiresIn")


@router.post("/presign", response_model=PresignResponse)
def presign_upload(
    body: PresignRequest, services: ServicesDep, principal: Writer
) -> PresignResponse:
    """A URL to PUT one file to; it is ingested into the caller's workspace on arrival."""
    if services.upload_signer is None:
        raise ServiceUnavailableError("direct uploads are not available on this backend")
    uploads = services.uploads
    path = uploads.path(body.path)
    uploads.size(body.size, what="file")
    uploads.file_type(path.rsplit("/", 1)[-1], body.content_type)
    # checked now, as /upload checks it: the drop's ingest submits it later
    services.ingest.defaults.chunking(body.chunk_size, body.chunk_overlap)
    # The upload's pace and storage quota, as /upload's (429, 413): the PUT goes straight to
    # storage, so this is the last point a person can be told.
    services.ingest.admit_presigned(principal.workspace_id, path, body.size)
    upload = services.upload_signer.sign_upload(
        workspace_id=principal.workspace_id,
        path=path,
        content_type=body.content_type,
        size=body.size,
        options=DropOptions(
            category=(body.category or "").strip() or None,
            chunk_size=body.chunk_size,
            chunk_overlap=body.chunk_overlap,
            mode=body.mode,
            metadata=given_metadata(body.metadata),
        ),
    )
    return PresignResponse(
        url=upload.url,
        method=upload.method,
        headers=upload.headers,
        key=upload.key,
        path=path,
        expires_in=upload.expires_in,
    )
