"""A file's original: `GET /knowledge-bases/{id}/original-link` (a short-lived link a browser
tab can open: it sends no token) and `GET /knowledge-bases/{id}/original` (the bytes, for the
caller's token or such a link; on AWS a redirect to S3, which serves them)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Security
from fastapi.responses import RedirectResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel

from bunko.domain.auth import SCOPE_READ
from bunko.errors import PermissionDeniedError, ServiceUnavailableError
from bunko.http.deps import Reader, ServicesDep, bearer, get_principal
from bunko.http.errors import LIBRARY_HEADER, error_responses
from bunko.ports.downloads import content_disposition
from bunko.services.library import OriginalFiles

router = APIRouter(tags=["knowledge-base"])
LINK_PATTERN = r"^[0-9]{1,20}\.[A-Za-z0-9_-]{1,100}$"


class OriginalLink(BaseModel):
    url: str  # absolute, or a path on this API (prefix the API's base URL)
    expiresIn: int  # seconds
    fileName: str
    mime: str


def _originals(services) -> OriginalFiles:
    if services.originals is None:
        raise ServiceUnavailableError("originals are not available on this backend")
    return services.originals


@router.get(
    "/knowledge-bases/{file_id}/original-link",
    response_model=OriginalLink,
    responses=error_responses(401, 403, 404),
)
def original_link(file_id: str, principal: Reader, services: ServicesDep) -> OriginalLink:
    """A link to the file's original, good for a few minutes and for this file only; open it
    in a new tab (a PDF at a page: append `#page=N`)."""
    doc, link = _originals(services).link(principal.workspace_id, file_id)
    return OriginalLink(url=link.url, expiresIn=link.expires_in, fileName=doc.name, mime=doc.mime)


@router.get(
    "/knowledge-bases/{file_id}/original",
    responses={
        200: {"content": {"application/octet-stream": {}}, "description": "The original."},
        307: {"description": "On AWS: to the original in S3 (a presigned URL)."},
        **error_responses(401, 403, 404),
    },
)
def original(
    file_id: str,
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    workspace: Annotated[str | None, Query(max_length=100)] = None,
    library: Annotated[str | None, Header(alias=LIBRARY_HEADER, max_length=300)] = None,
    link: Annotated[
        str | None,
        # `<expiry>.<mac>` in ASCII: a malformed link is a 400, never a 500 (expiry "²").
        Query(max_length=200, pattern=LINK_PATTERN, description="From original-link."),
    ] = None,
) -> Response:
    """The file as it was uploaded, for the caller's token or a link from original-link."""
    originals = _originals(services)
    if link is not None and workspace is not None:
        doc = originals.linked(workspace, file_id, link)
    else:
        # In the library the request names, as every other route (a member's token reads a
        # shared library's originals there).
        principal = get_principal(services, credentials, library)
        if not principal.has(SCOPE_READ):
            raise PermissionDeniedError(f"this needs the {SCOPE_READ} permission")
        if not originals.served_here:  # S3 serves it, by a link signed for this file
            _, signed = originals.link(principal.workspace_id, file_id)
            return RedirectResponse(signed.url, status_code=307)
        doc = originals.document(principal.workspace_id, file_id)
    headers = {
        "Content-Disposition": content_disposition(doc.name, doc.mime),
        "Cache-Control": "private, no-store",
    }
    # Sandboxed should a browser show a downloaded type anyway; the PDF viewer does not run
    # in a sandbox (and runs no script in this origin).
    if doc.mime != "application/pdf":
        headers["Content-Security-Policy"] = "sandbox; default-src 'none'; img-src 'self'"
    return Response(originals.read(doc), media_type=doc.mime, headers=headers)
