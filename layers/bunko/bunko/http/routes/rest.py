"""The REST routers of aurak's API and TelosDB's HTTP API, in the order the app mounts them."""

from __future__ import annotations

from fastapi import APIRouter

from bunko.http.routes import (
    answers,
    api_keys,
    audit,
    auth,
    chat,
    drop_folder,
    embedding_model,
    knowledge_bases,
    libraries,
    libreoffice,
    model_configs,
    moving,
    oidc,
    openai_compat,
    research,
    search,
    telosdb,
    user_settings,
    users,
    vision,
    web_session,
)


def rest_routers() -> list[APIRouter]:
    return [
        auth.router,
        web_session.router,
        oidc.router,
        users.router,
        api_keys.router,
        moving.router,  # before libraries': `/libraries/import` is no library's id
        libraries.router,
        drop_folder.router,
        model_configs.router,
        search.router,
        knowledge_bases.router,
        user_settings.router,
        embedding_model.router,
        vision.router,
        chat.router,
        openai_compat.router,
        libreoffice.router,
        telosdb.router,
        research.router,
        audit.router,
        answers.router,
    ]
