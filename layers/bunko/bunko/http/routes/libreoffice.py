"""aurak's LibreOffice conversion service: POST /libreoffice/convert, GET /libreoffice/health.

Conversion needs `soffice` on the PATH (Debian: libreoffice-writer-nogui, plus
libreoffice-calc-nogui / libreoffice-impress-nogui for spreadsheets and slides); without
it both endpoints answer 503. The PDF is kept in the caller's workspace and served from
`pdf_path`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, UploadFile
from fastapi.responses import Response
from pydantic import BaseModel

from bunko.http.deps import ConversionsDep, Reader, ReadsOnly, Writer
from bunko.http.errors import error_responses

router = APIRouter(prefix="/libreoffice", tags=["libreoffice"])


class Converted(BaseModel):
    pdf_path: str
    converted: bool
    original: str
    file_size: int


class Health(BaseModel):
    status: str
    service: str
    version: str
    uptime: float  # seconds


@router.post(
    "/convert",
    dependencies=[ReadsOnly],  # converts a file it is sent, keeps nothing
    response_model=Converted,
    responses=error_responses(400, 401, 403, 413, 415, 503),
)
def convert(
    file: Annotated[UploadFile, File(description="A .docx, .doc, .odt, .pptx, .xlsx, ...")],
    principal: Writer,
    conversions: ConversionsDep,
) -> Converted:
    done = conversions.convert(
        principal.workspace_id, filename=file.filename or "", data=file.file.read()
    )
    return Converted(
        pdf_path=f"/libreoffice/files/{done.id}.pdf",
        converted=True,
        original=done.original,
        file_size=done.file_size,
    )


@router.get(
    "/files/{conversion_id}.pdf",
    response_class=Response,
    responses={200: {"content": {"application/pdf": {}}}, **error_responses(401, 403, 404)},
)
def download(conversion_id: str, principal: Reader, conversions: ConversionsDep) -> Response:
    pdf = conversions.get_pdf(principal.workspace_id, conversion_id)
    return Response(pdf, media_type="application/pdf")


@router.get("/health", response_model=Health, responses=error_responses(503))
def health(conversions: ConversionsDep) -> Health:
    return Health(**conversions.health())
