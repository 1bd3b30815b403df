from __future__ import annotations

from fastapi import APIRouter

from bunko import __version__
from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.http.deps import ServicesDep

router = APIRouter(tags=["health"])


@router.get("/health")
def health(services: ServicesDep) -> dict:
    """Liveness plus what a person checks first: backend, model and queue depth."""
    embedder = services.embedder
    return {
        "status": "ok",
        "version": __version__,
        "backend": services.settings.backend,
        "embedder": embedder.name if embedder else None,
        "documents": services.metadata.count_documents(DEFAULT_WORKSPACE_ID),
        "pending": getattr(services.queue, "pending", 0),
    }


@router.get("/health/live")
def live() -> dict:
    """The process answers: no store is read, so a readiness probe (the Lambda Web Adapter's
    on AWS) costs nothing and a DynamoDB hiccup does not keep a function from starting."""
    return {"status": "ok", "version": __version__}
