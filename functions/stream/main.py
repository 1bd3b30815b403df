"""The streaming routes (/chat/stream, /mcp): the same FastAPI app, served by uvicorn under
the Lambda Web Adapter in response_stream mode (Mangum cannot stream a response).

uvicorn calls `build` once at start-up (`--factory`), during the Lambda init phase, before
the adapter's readiness check lets the first request through.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from bunko.lambda_entry import api_app, served_app

if TYPE_CHECKING:
    from fastapi import Request, Response
    from starlette.types import ASGIApp

logger = Logger()
# The adapter passes API Gateway's request context on in this header.
CONTEXT_HEADER = "x-amzn-request-context"


def build() -> ASGIApp:
    app = api_app()

    @app.middleware("http")
    async def correlate(request: Request, call_next) -> Response:
        context = json.loads(request.headers.get(CONTEXT_HEADER) or "{}")
        logger.set_correlation_id(context.get("requestId"))
        response = await call_next(request)
        logger.info("request", extra={"path": request.url.path, "status": response.status_code})
        return response

    return served_app()  # the stage back in the URLs the app builds, payload limit, CORS
