"""POST /uploads/presign: a signed URL to PUT a file too large for the API's request body.

The client PUTs the file to the returned URL with the returned headers; the object is ingested
into the caller's workspace when it arrives (follow its status in the document list by path).
Mounted only where the backend can sign uploads (S3 on AWS).
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from bunko.errors import ServiceUnavailableError
from bunko.http.deps import ServicesDep, Writer

router = APIRouter(prefix="/uploads", tags=["uploads"])
# A media type (RFC 9110: type/subtype, parameters in printable ASCII): it becomes a signed
# header the client must send, so nothing that could not be a header value is signed.
_MEDIA_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
MEDIA_TYPE = rf"^{_MEDIA_NAME}/{_MEDIA_NAME}( *;[ -~]*)?$"


class PresignRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    path: str = Field(min_length=1, max_length=1024, description="The document's logical path")
    category: str | None = Field(default=None, max_length=200)
    content_type: str | None = Field(
        default=None, alias="contentType", max_length=200, pattern=MEDIA_TYPE
    )
    size: int | None = Field(default=None, ge=0, description="Checked against the size limit")


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
    if body.size is not None:
        uploads.size(body.size, what="file")
    uploads.file_type(path.rsplit("/", 1)[-1], body.content_type)
    upload = services.upload_signer.sign_upload(
        workspace_id=principal.workspace_id,
        path=path,
        content_type=body.content_type,
        category=body.category,
    )
    return PresignResponse(
        url=upload.url,
        method=upload.method,
        headers=upload.headers,
        key=upload.key,
        path=path,
        expires_in=upload.expires_in,
    )
