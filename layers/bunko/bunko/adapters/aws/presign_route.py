"""POST /uploads/presign: a presigned S3 PUT for files larger than Lambda's 6 MB payload.

The client PUTs the file to the returned URL with the returned headers; the object lands
under the drop prefix, and its S3 notification ingests it like any drop (status can be
followed with the document list by path). Only the AWS shape mounts this router.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from bunko.adapters.aws.s3_blobs import presign_put_object
from bunko.adapters.aws.s3_drops import category_metadata, drop_key
from bunko.adapters.aws.settings import AwsSettings
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.errors import PayloadTooLargeError
from bunko.http.deps import ServicesDep
from bunko.services.ingest import normalise_path

router = APIRouter(prefix="/uploads", tags=["uploads"])


class PresignRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    path: str = Field(min_length=1, max_length=1024, description="The document's logical path")
    category: str | None = Field(default=None, max_length=200)
    content_type: str | None = Field(default=None, alias="contentType", max_length=200)
    size: int | None = Field(default=None, ge=0, description="Checked against the size limit")


class PresignResponse(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    url: str
    method: str
    headers: dict[str, str]
    key: str
    path: str
    expires_in: int = Field(alias="expiresIn")


def request_workspace(request: Request) -> str:
    """The caller's workspace as the auth layer resolved it, else the default workspace."""
    return getattr(request.state, "workspace_id", None) or DEFAULT_WORKSPACE_ID


@cache
def _s3_client():  # one client per execution environment
    from bunko.adapters.aws.clients import boto_client

    return boto_client("s3", _aws_settings())


@cache
def _aws_settings() -> AwsSettings:
    return AwsSettings()


@router.post("/presign", response_model=PresignResponse)
def presign_upload(
    body: PresignRequest,
    services: ServicesDep,
    workspace_id: Annotated[str, Depends(request_workspace)],
) -> PresignResponse:
    """A URL to PUT one file to; it is ingested when the upload completes."""
    path = normalise_path(body.path)
    limit = services.settings.max_file_bytes
    if body.size is not None and body.size > limit:
        raise PayloadTooLargeError(f"file is {body.size} bytes; the limit is {limit} bytes")
    aws = _aws_settings()
    upload = presign_put_object(
        _s3_client(),
        bucket=aws.bucket,
        key=drop_key(drop_prefix=aws.drop_prefix, workspace_id=workspace_id, path=path),
        content_type=body.content_type,
        expires_in=aws.presign_expires_seconds,
        metadata=category_metadata(body.category) if body.category else None,
    )
    return PresignResponse(
        url=upload.url,
        method=upload.method,
        headers=upload.headers,
        key=upload.key,
        path=path,
        expires_in=upload.expires_in,
    )
