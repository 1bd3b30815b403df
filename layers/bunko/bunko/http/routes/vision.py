"""aurak's vision pipeline advice: GET /api/vision/recommend-mode?file=&size=."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from bunko.domain.ingest_options import IngestMode
from bunko.http.deps import AccountsDep, Reader, VisionDep, settings_owner
from bunko.http.errors import error_responses

router = APIRouter(prefix="/api/vision", tags=["vision"], responses=error_responses(401, 403))


class ModeRecommendation(BaseModel):
    recommendedMode: IngestMode
    reason: str
    estimatedCost: float  # USD
    estimatedTime: float  # seconds
    warnings: list[str]
    pages: int | None  # known or estimated page count (PDFs, images)
    charsPerPage: int | None  # measured on an uploaded PDF


@router.get("/recommend-mode", response_model=ModeRecommendation, responses=error_responses(400))
def recommend_mode(
    principal: Reader,
    accounts: AccountsDep,
    vision: VisionDep,
    file: Annotated[str, Query(min_length=1, max_length=1024, description="File name or path")],
    size: Annotated[int | None, Query(ge=0, description="Size in bytes")] = None,
    lang: Annotated[
        Literal["zh", "en", "ja"] | None,
        Query(description="Language of the reason and warnings (default: the user's setting)"),
    ] = None,
) -> ModeRecommendation:
    """fast (text extraction) or precise (a vision model reads the pages), judged from
    the file type, the size and, for a PDF already uploaded, the text on its pages."""
    language = (
        lang
        or accounts.user_settings.get(settings_owner(principal), principal.workspace_id).language
    )
    advice = vision.recommend(principal.workspace_id, file=file, size=size, language=language)
    return ModeRecommendation(
        recommendedMode=advice.mode,
        reason=advice.reason,
        estimatedCost=advice.estimated_cost,
        estimatedTime=advice.estimated_seconds,
        warnings=advice.warnings,
        pages=advice.pages,
        charsPerPage=advice.chars_per_page,
    )
