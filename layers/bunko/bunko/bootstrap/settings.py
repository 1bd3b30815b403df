"""The settings wing, wired: what people and workspaces save (chat and search preferences,
a workspace's folders and limits), which search and chat read and the accounts edit."""

from __future__ import annotations

from dataclasses import dataclass

from bunko.bootstrap.adapters import Adapters
from bunko.bootstrap.ingest import signs_in
from bunko.config import Settings
from bunko.services.embedding import ModelSwitch
from bunko.services.settings import UserSettingsService, WorkspaceSettingsService, default_settings


@dataclass(frozen=True)
class Preferences:
    """What users and workspaces saved: search and chat read it, the accounts edit it."""

    user: UserSettingsService
    workspace: WorkspaceSettingsService


def build_preferences(
    settings: Settings, adapters: Adapters, switch: ModelSwitch | None
) -> Preferences | None:
    """What people and workspaces save (the settings wing's services), over the accounts'
    stores; the server's Settings give the defaults. None where this process signs nobody in."""
    if not signs_in(adapters):
        return None
    assert adapters.accounts is not None and switch is not None
    stores = adapters.accounts.stores
    return Preferences(
        user=UserSettingsService(
            stores.settings,
            stores.model_configs,
            defaults=default_settings(
                top_k=settings.search_limit, similarity_threshold=settings.min_score
            ),
            embedding=switch,
        ),
        workspace=WorkspaceSettingsService(
            stores.settings,
            min_score=settings.min_score,
            limit=settings.search_limit,
            folder_check=adapters.folder_check,
        ),
    )
