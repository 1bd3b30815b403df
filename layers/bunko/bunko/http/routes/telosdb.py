"""TelosDB's auxiliary HTTP API (spec §6): /edition, /version, /heal, /model_name,
/settings, /indexing_status.

Mounted on the REST app (port 3000) and on the MCP app (port 3001); an app including
this router must set `app.state.services`. /edition, /version and /model_name describe the
server and need no token; the rest act on the caller's workspace.
"""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter

from bunko import __version__
from bunko.domain.auth import SCOPE_ADMIN
from bunko.http.deps import AccountsDep, Reader, ServicesDep, Writer
from bunko.http.errors import error_responses
from bunko.operations.telosdb import IndexingStatus, TelosSettings, TelosSettingsUpdate

router = APIRouter(tags=["telosdb"])


@router.get("/edition")
def edition(services: ServicesDep) -> dict:
    name = services.status.edition
    return {"edition": name, "embedding_loaded": True} if name == "pro" else {"edition": name}


@router.get("/version")
def version() -> dict:
    return {"version": __version__}


@router.get("/model_name")
def model_name(services: ServicesDep) -> dict:
    status = services.status
    return {
        "edition": status.edition,
        "model_name": status.model_name,
        "dimension": status.dimension,
    }


@router.get("/heal", responses=error_responses(401, 403))
def heal(principal: Writer, services: ServicesDep) -> dict:
    """Re-sync the search index of the caller's workspace from the metadata store."""
    return {"synced": services.pipeline.reindex(principal.workspace_id)}


@router.get("/settings", response_model=TelosSettings, responses=error_responses(401, 403))
def get_settings(principal: Reader, accounts: AccountsDep) -> dict:
    return accounts.workspace_settings.get(principal.workspace_id)


@router.post("/settings", response_model=TelosSettings, responses=error_responses(400, 401, 403))
def save_settings(body: TelosSettingsUpdate, principal: Writer, accounts: AccountsDep) -> dict:
    changes = {
        k: v for k, v in body.model_dump(mode="json", exclude_unset=True).items() if v is not None
    }
    return accounts.workspace_settings.update(
        principal.workspace_id, changes, may_watch_folders=principal.has(SCOPE_ADMIN)
    )


@router.get("/indexing_status", response_model=IndexingStatus, responses=error_responses(401))
def indexing_status(principal: Reader, services: ServicesDep) -> IndexingStatus:
    return IndexingStatus(**asdict(services.library.indexing(principal.workspace_id)))
