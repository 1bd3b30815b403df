"""Settings: a user's chat and search preferences, and a workspace's (folders, limits)."""

from bunko.services.settings.user_settings import (
    UserSettingsService,
    default_settings,
    settings_owner,
)
from bunko.services.settings.workspace_settings import FolderCheck, WorkspaceSettingsService

__all__ = [
    "FolderCheck",
    "UserSettingsService",
    "WorkspaceSettingsService",
    "default_settings",
    "settings_owner",
]
